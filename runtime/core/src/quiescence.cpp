// wait_idle: every task, message and module unit submitted so far has
// finished.
//
// Counting. Every frame is counted spawned (by the worker that made it, by
// the external lane it was submitted on, or in external_created) before anyone can run it, and executed after its
// callable was destroyed; a module's units that hold no frame (a lock-mode
// request waiting in a queue) are counted by its subsystem (created(),
// finished(): ext/subsystem.hpp). Creations are counted before the
// creator's own completion. All counters only grow.
//
// The test reads every `finished` count first (the workers' executed, each
// subsystem's finished()), then every `created` count (acquire loads, each
// pairing with the release increments). Any unit counted finished was
// counted created before, hence is in the second sum; so when the sums are
// equal, no unit created before the moment between the two phases was
// still in flight at that moment, and none could create more. parallel_invoke's
// join frames are outside the sums: they live only inside the task that
// pushed them.
#include <chrono>
#include <string>
#include <thread>

#include <strata/runtime/runtime.hpp>

#include "lanes.hpp"

namespace strata {
namespace {

// How long wait_idle waits for run_worker threads to take every worker
// before it calls a worker that stays unhosted an error.
constexpr std::chrono::seconds k_host_grace{2};

bool quiescent(detail::runtime_core& rt) {
  std::uint64_t finished = 0, created = 0;
  for (auto& w : rt.workers) finished += w->counters.executed.get();
  rt.for_each_subsystem([&](const detail::subsystem& s) { finished += s.finished(); });
  std::atomic_thread_fence(std::memory_order_acquire);  // acquire: the reads above before those below
  for (auto& w : rt.workers) created += w->counters.spawned.get();
  created += rt.external_created.load(std::memory_order_acquire);  // acquire: pairs with the release increment in submit
  created += detail::lanes_created(rt);
  rt.for_each_subsystem([&](const detail::subsystem& s) { created += s.created(); });
  return finished == created;
}

// engine::external with some workers hosted: the first worker nobody hosts
// (num_workers when all are).
unsigned first_unhosted(const detail::runtime_core& rt) {
  for (const auto& w : rt.workers) {
    if (w->hosted.load(std::memory_order_acquire) == 0) return w->index;  // acquire: a hint; re-read each round
  }
  return static_cast<unsigned>(rt.workers.size());
}

}  // namespace

void runtime::wait_idle() {
  auto& rt = *m_core;
  if (detail::worker* w = detail::current_worker(); w != nullptr && w->rt == &rt) {
    throw usage_error("strata::runtime::wait_idle called from inside a task: it would wait for itself");
  }
  unsigned spins = 0;
  std::chrono::steady_clock::time_point unhosted_since{};
  while (!quiescent(rt)) {
    if (rt.external_engine) {
      if (detail::drive_inline(rt)) continue;  // nobody hosts: the caller runs the workers
      const unsigned missing = first_unhosted(rt);
      if (missing == rt.workers.size()) {
        unhosted_since = {};
      } else if (unhosted_since == std::chrono::steady_clock::time_point{}) {
        unhosted_since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - unhosted_since > k_host_grace) {
        throw usage_error("strata::runtime::wait_idle: worker " + std::to_string(missing) +
                          " is not hosted (engine::external): call rt.run_worker(strata::worker_id{" +
                          std::to_string(missing) +
                          "}) on a thread of yours, or host none and let waits run the workers inline");
      }
    }
    if (++spins < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(spins < 1024 ? 20 : 200));
    }
  }
}

}  // namespace strata
