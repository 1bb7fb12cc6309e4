// strata::mpi::session: the public face of the bridge (bridge.hpp).
#include <strata/mpi.hpp>

#include "bridge.hpp"

namespace strata::mpi {

session::session(int& argc, char**& argv, runtime& rt, const config& c)
    : m_rt(rt), m_b(std::make_unique<detail::bridge>(rt, c, detail::bridge::init{&argc, &argv})) {}

session::session(runtime& rt, const config& c)
    : m_rt(rt), m_b(std::make_unique<detail::bridge>(rt, c, detail::bridge::init{})) {}

session::session(runtime& rt, communicator app_comm, const config& c) : m_rt(rt) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) throw usage_error("strata::mpi::session: a communicator was given but MPI is not initialized");
  detail::bridge::init how;
  how.use_world = false;
  how.app_comm = MPI_Comm_f2c(app_comm.fortran);
  m_b = std::make_unique<detail::bridge>(rt, c, how);
}

session::~session() = default;

int session::rank() const noexcept { return m_b->rank(); }
int session::size() const noexcept { return m_b->size(); }
communicator session::comm() const noexcept { return communicator{MPI_Comm_c2f(m_b->data_comm())}; }
thread_level session::level() const noexcept { return m_b->level(); }
progress_mode session::progress_kind() const noexcept { return m_b->mode(); }
bool session::owns_mpi() const noexcept { return m_b->owns_mpi(); }
bool session::owner_here() const noexcept { return m_b->owner_here(); }

void session::post_task(int rank, const std::byte* payload, std::size_t n) {
  m_b->post(rank, detail::handler::task, payload, n);
}

std::uint64_t session::expect_reply(int rank, std::unique_ptr<detail::reply_sink> sink) {
  return m_b->expect_reply(rank, std::move(sink));
}

void session::wait_quiescent() { m_b->wait_quiescent(); }
void session::flush() { m_b->flush_all(); }

std::size_t session::progress() {
  if (m_b->mode() != progress_mode::caller) return m_b->help();
  if (!m_b->owner_here()) {
    throw usage_error("strata::mpi: under progress=caller, progress() runs on the session's thread");
  }
  return m_b->pass();
}

// A reply is usually a few µs away: received here, it needs no hand-off
// from another thread. Meanwhile the comm worker leaves the passes to this
// thread (bridge::help_begin). It helps for 200 µs and 512 tries, whichever
// ends later: a thread preempted while it helps (ranks sharing cores with
// other threads) must not come back to find its time spent and sleep on
// the future, handing the reply to an owner that sleeps too. The clock is
// read every 16 tries: a reading costs a tenth of a pass.
void session::help_wait(bool (*ready)(const void*), const void* f) {
  struct helping {
    detail::bridge& b;
    bool done = false;
    ~helping() { b.help_end(done); }
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  m_b->help_begin();
  helping h{*m_b};
  h.done = ready(f);
  for (unsigned i = 1; !h.done; ++i) {
    m_b->help();
    h.done = ready(f);
    if (i >= 512 && i % 16 == 0 && std::chrono::steady_clock::now() >= until) break;
  }
}

void session::lock_mpi() { m_b->lock_serialized(); }
void session::unlock_mpi() noexcept { m_b->unlock_serialized(); }

session_stats session::stats() const { return m_b->stats(); }

}  // namespace strata::mpi
