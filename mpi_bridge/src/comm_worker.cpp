// The comm worker's work source and its registration (design in comm_worker.hpp).
#include "comm_worker.hpp"

#include <memory>
#include <string>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/subsystem.hpp>
#include <strata/runtime/ext/sync.hpp>
#include <strata/runtime/ext/worker.hpp>

#include "bridge.hpp"

namespace strata::mpi::detail {

namespace sd = strata::detail;

bool comm_source::ready(sd::worker& w) noexcept {
  if (!m_active) return false;
  std::unique_lock lock(m_use, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // detach() runs: nothing to serve
  bridge* b = m_bridge.load(std::memory_order_relaxed);  // relaxed: under m_use
  // `sleeping` is 1 from the worker's park announce to its wake-up: this
  // call is then the re-check (its own word, read by its own thread).
  return b != nullptr && b->worker_ready(w.sleeping.load(std::memory_order_relaxed) == 1);
}

std::size_t comm_source::poll(sd::worker&, std::size_t budget) noexcept {
  if (!m_active) return 0;
  std::unique_lock lock(m_use, std::try_to_lock);
  if (!lock.owns_lock()) return 0;
  bridge* b = m_bridge.load(std::memory_order_relaxed);  // relaxed: under m_use
  return b == nullptr ? 0 : b->worker_pass(budget > 1);
}

void comm_source::idle_wait(sd::worker& w) noexcept {
  long timeout_ns = 0;  // no session: sleep until woken (attach wakes the worker)
  {
    std::unique_lock lock(m_use, std::try_to_lock);
    if (!lock.owns_lock()) return;  // detach() runs: look again
    if (bridge* b = m_bridge.load(std::memory_order_relaxed)) timeout_ns = b->worker_idle_timeout_ns();
  }
  sd::futex_wait(w.sleeping, 1, timeout_ns);
}

void comm_source::attach(bridge* b) noexcept {
  std::lock_guard lock(m_use);
  m_bridge.store(b, std::memory_order_relaxed);  // relaxed: under m_use
}

void comm_source::detach() noexcept {
  std::lock_guard lock(m_use);  // a pass in progress ends first
  m_bridge.store(nullptr, std::memory_order_relaxed);
}

namespace {

// The sources of one runtime: made once, the comm worker fixed by the
// first session under progress=worker.
class comm_seat final : public sd::subsystem {
 public:
  static constexpr char key = 0;
  comm_seat(sd::runtime_core& rt, unsigned index) : m_index(index) {
    try {
      rt.add_source([this, index](sd::worker& w) {
        auto* s = new comm_source(w.index == index);
        if (w.index == index) m_source = s;
        return static_cast<sd::work_source*>(s);
      });
    } catch (const usage_error& e) {
      throw usage_error("strata::mpi: progress=worker: worker " + std::to_string(index) +
                        " cannot be the comm worker: " + e.what() +
                        " (an event loop's); use STRATA_MPI_PROGRESS=thread, or another STRATA_MPI_COMM_WORKER");
    }
  }
  unsigned index() const noexcept { return m_index; }
  comm_source& source() const noexcept { return *m_source; }

 private:
  unsigned m_index;
  comm_source* m_source = nullptr;  // owned by the runtime's sources
};

}  // namespace

comm_source& attach_comm_worker(sd::runtime_core& rt, unsigned index, bridge* b) {
  sd::subsystem& s = rt.attach(&comm_seat::key, [&] { return std::make_unique<comm_seat>(rt, index); });
  auto& seat = static_cast<comm_seat&>(s);
  if (seat.index() != index) {
    throw usage_error("strata::mpi: progress=worker: this runtime's comm worker is worker " +
                      std::to_string(seat.index()) + " (chosen by its first session); a session asked for worker " +
                      std::to_string(index));
  }
  seat.source().attach(b);
  // It may sleep without a timeout (no session before): it looks again.
  sd::notify_worker(*rt.workers[index]);
  return seat.source();
}

}  // namespace strata::mpi::detail
