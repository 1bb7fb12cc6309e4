// The bridge's life cycle: MPI start, the registry check, shutdown (the
// protocol is at the top of bridge.hpp; termination in quiescence.hpp).
#include "bridge.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/worker.hpp>

#include "bridge_util.hpp"
#include "comm_worker.hpp"

namespace strata::mpi::detail {

std::vector<std::string> remote_names(std::vector<std::string>* conflicts);


bridge::bridge(runtime& rt, const config& c, const init& how) : m_rt(rt), m_cfg(c), m_started(clock::now()) {
  m_now = m_started;
  m_cfg.validate();
  start_mpi(how);
  try {
    m_lanes.reserve(static_cast<std::size_t>(m_size));
    m_departed = std::make_unique<departure[]>(static_cast<std::size_t>(m_size));
    for (int i = 0; i < m_size; ++i) {
      m_lanes.push_back(std::make_unique<lane>());
      m_lanes.back()->st.rank = i;
    }
    // An outbox buffer: a whole buffer up to 64 peers at the default size,
    // smaller beyond (4 MiB per outbox in all), never under 4 KiB.
    const std::size_t peers = static_cast<std::size_t>(std::max(m_size - 1, 1));
    m_slot_bytes =
        std::min(m_cfg.buffer_bytes, std::max<std::size_t>(std::size_t{4} << 10, (std::size_t{4} << 20) / peers));
    m_pool.reserve(k_pool_buffers);  // recycle() then never allocates for them
    m_fast_post = m_cfg.fast_append && fast_appends_possible();
    m_retiring.reserve(64);
    m_id = new_bridge_id();
    m_in.resize(static_cast<std::size_t>(m_size));
    m_recv_reqs.assign(m_cfg.receives, MPI_REQUEST_NULL);
    m_recv_bufs.resize(m_cfg.receives);
    m_recv_capacity = std::min<std::size_t>(m_cfg.max_message_bytes + 4096, INT_MAX);
    m_indices.resize(std::max<std::size_t>(m_cfg.receives, 2 * static_cast<std::size_t>(m_size)));
    m_statuses.resize(m_indices.size());
    for (unsigned i = 0; i < m_cfg.receives; ++i) {
      void* p = mmap(nullptr, m_recv_capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
      if (p == MAP_FAILED) {
        throw config_error("strata::mpi: cannot reserve receive buffers: " + std::string(std::strerror(errno)));
      }
      m_recv_bufs[i] = {static_cast<std::byte*>(p), m_recv_capacity};
      check(MPI_Recv_init(m_recv_bufs[i].p, static_cast<int>(m_recv_capacity), MPI_BYTE, MPI_ANY_SOURCE, k_tag_data,
                          m_data, &m_recv_reqs[i]),
            "MPI_Recv_init");
    }
    check(MPI_Startall(static_cast<int>(m_recv_reqs.size()), m_recv_reqs.data()), "MPI_Startall");
    check_registries();
    attach_actors();
  } catch (...) {
    shutdown_mpi();
    if (m_id != 0) forget_bridge_id(m_id);
    throw;
  }
  m_owner_id = std::this_thread::get_id();
  m_deadline_on = m_cfg.deadline_ms != 0 && (m_mode != progress_mode::caller || m_cfg.deadline_set);
  for (auto& l : m_lanes) l->last_sent = m_started;
  if (m_mode == progress_mode::thread) m_thread = std::thread([this] { progress_thread(); });
  if (m_mode == progress_mode::worker) {
    try {
      m_comm_source = &attach_comm_worker(m_rt.core(), m_comm->index, this);
    } catch (...) {
      detach_actors();
      shutdown_mpi();
      forget_bridge_id(m_id);
      throw;
    }
  }
}

void bridge::start_mpi(const init& how) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0) throw usage_error("strata::mpi::session: MPI was already finalized");
  int provided = MPI_THREAD_SINGLE;
  if (initialized == 0) {
    if (!how.use_world) throw usage_error("strata::mpi::session: a communicator was given but MPI is not initialized");
    const int rc = MPI_Init_thread(how.argc, how.argv, to_mpi(m_cfg.init_level), &provided);
    if (rc != MPI_SUCCESS) throw config_error("strata::mpi: MPI_Init_thread failed: " + mpi_error(rc));
    m_owns_mpi = true;
  } else {
    MPI_Query_thread(&provided);
  }
  m_level = from_mpi(provided);
  const bool thread_ok = m_level == thread_level::serialized || m_level == thread_level::multiple;
  const auto fail = [&](const std::string& why) {
    if (m_owns_mpi) MPI_Finalize();
    throw config_error(why);
  };
  if (m_level == thread_level::single) {
    fail(std::string("strata::mpi: MPI provides ") + level_name(m_level) +
         "; the bridge needs MPI_THREAD_FUNNELED (progress inside the session's calls) or SERIALIZED/MULTIPLE "
         "(a progress thread): initialize MPI with MPI_Init_thread, or let the session do it");
  }
  if ((m_cfg.progress == progress_mode::thread || m_cfg.progress == progress_mode::worker) && !thread_ok) {
    fail(std::string("strata::mpi: STRATA_MPI_PROGRESS=") +
         (m_cfg.progress == progress_mode::thread ? "thread" : "worker") +
         " needs MPI_THREAD_SERIALIZED or MULTIPLE; MPI provides " + level_name(m_level) +
         " (use progress=caller, or initialize MPI at a higher level)");
  }
  if (m_cfg.progress == progress_mode::worker) {
    const auto& workers = m_rt.core().workers;
    const unsigned index =
        m_cfg.comm_worker == config::last_worker ? static_cast<unsigned>(workers.size() - 1) : m_cfg.comm_worker;
    if (index >= workers.size()) {
      fail("strata::mpi: config.comm_worker (STRATA_MPI_COMM_WORKER) = " + std::to_string(m_cfg.comm_worker) +
           ", but the runtime has " + std::to_string(workers.size()) + " workers (0.." +
           std::to_string(workers.size() - 1) + ")");
    }
    m_comm = workers[index].get();
  }
  m_mode = m_cfg.progress == progress_mode::automatic ? (thread_ok ? progress_mode::thread : progress_mode::caller)
                                                      : m_cfg.progress;
  if (m_level == thread_level::funneled) {
    int is_main = 0;
    MPI_Is_thread_main(&is_main);
    if (is_main == 0) {
      fail("strata::mpi: under MPI_THREAD_FUNNELED the session must be created on the thread that initialized MPI");
    }
  }
  const MPI_Comm base = how.use_world ? MPI_COMM_WORLD : how.app_comm;
  int rc = MPI_Comm_dup(base, &m_data);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(base, &m_ctrl);
  if (rc != MPI_SUCCESS) fail("strata::mpi: MPI_Comm_dup failed: " + mpi_error(rc));
  MPI_Comm_set_name(m_data, const_cast<char*>("strata data"));
  MPI_Comm_set_name(m_ctrl, const_cast<char*>("strata control"));
  // Only the session's own communicators return errors; the application's
  // keep its handler.
  MPI_Comm_set_errhandler(m_data, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(m_ctrl, MPI_ERRORS_RETURN);
  MPI_Comm_rank(m_data, &m_rank);
  MPI_Comm_size(m_data, &m_size);
  if (m_size > (1 << 16)) fail("strata::mpi: more than 65536 ranks (the actor address has 16 rank bits)");
}

// Every rank must have the same remote functions: the digest of the sorted
// names is compared, and on a mismatch every rank learns every rank's names
// and throws, naming what each rank lacks.
void bridge::check_registries() {
  std::vector<std::string> conflicts;
  std::vector<std::string> names = remote_names(&conflicts);
  for (const auto& n : strata::detail::remote_message_names()) names.push_back("actor message " + n);
  std::sort(names.begin(), names.end());
  if (!conflicts.empty()) {
    std::string list;
    for (const auto& n : conflicts) list += (list.empty() ? "" : ", ") + n;
    throw usage_error("strata::mpi: STRATA_MPI_REMOTE registered different functions under one name: " + list);
  }
  std::string joined;
  for (const auto& n : names) joined += n + '\n';
  std::uint64_t mine[2] = {name_hash(joined), names.size()};
  std::vector<std::uint64_t> all(2 * static_cast<std::size_t>(m_size));
  check(MPI_Allgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, m_ctrl), "MPI_Allgather (registry digest)");
  bool same = true;
  for (std::size_t r = 0; r < static_cast<std::size_t>(m_size); ++r) {
    same = same && all[2 * r] == mine[0] && all[2 * r + 1] == mine[1];
  }
  if (same) return;
  const int len = static_cast<int>(joined.size());
  std::vector<int> lens(static_cast<std::size_t>(m_size)), offs(static_cast<std::size_t>(m_size));
  check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, m_ctrl), "MPI_Allgather (registry sizes)");
  int total = 0;
  for (int r = 0; r < m_size; ++r) {
    offs[static_cast<std::size_t>(r)] = total;
    total += lens[static_cast<std::size_t>(r)];
  }
  std::string every(static_cast<std::size_t>(total), '\0');
  check(MPI_Allgatherv(joined.data(), len, MPI_CHAR, every.data(), lens.data(), offs.data(), MPI_CHAR, m_ctrl),
        "MPI_Allgatherv (registry names)");
  std::vector<std::vector<std::string>> per(static_cast<std::size_t>(m_size));
  std::vector<std::string> all_names;
  for (int r = 0; r < m_size; ++r) {
    std::string s = every.substr(static_cast<std::size_t>(offs[static_cast<std::size_t>(r)]),
                                 static_cast<std::size_t>(lens[static_cast<std::size_t>(r)]));
    for (std::size_t a = 0, b; (b = s.find('\n', a)) != std::string::npos; a = b + 1) {
      per[static_cast<std::size_t>(r)].push_back(s.substr(a, b - a));
      all_names.push_back(s.substr(a, b - a));
    }
  }
  std::sort(all_names.begin(), all_names.end());
  all_names.erase(std::unique(all_names.begin(), all_names.end()), all_names.end());
  std::string msg =
      "strata::mpi: the ranks run different registries of remote functions and actor messages (different binaries?):";
  for (int r = 0; r < m_size; ++r) {
    const auto& mine_r = per[static_cast<std::size_t>(r)];
    std::string missing;
    for (const auto& n : all_names) {
      if (!std::binary_search(mine_r.begin(), mine_r.end(), n)) missing += (missing.empty() ? "" : ", ") + n;
    }
    if (!missing.empty()) msg += " rank " + std::to_string(r) + " lacks " + missing + ";";
  }
  throw usage_error(msg);
}

bridge::~bridge() {
  detach_actors();
  // Tasks the bridge spawned reference it: let them finish (they only run
  // the function and post their reply).
  while (m_tasks_live.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  post_goodbyes();
  m_stop.store(true);
  wake_owner();
  if (m_thread.joinable()) m_thread.join();
  if (m_comm_source != nullptr) m_comm_source->detach();  // after the pass in progress, none
  {
    // Futures still waiting for a reply: fail them rather than leave them
    // hanging.
    std::lock_guard lock(m_replies_m);
    for (auto& [id, p] : m_replies) {
      p.second->error("strata::mpi: the session closed before rank " + std::to_string(p.first) + " replied");
    }
    m_replies.clear();
  }
  shutdown_mpi();
  // No thread that ends from now on touches the outboxes (forget_bridge_id
  // takes the mutex their exits hold while they mark theirs).
  if (m_id != 0) forget_bridge_id(m_id);
  for (outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr;) {
    outbox* next = ob->next;
    delete ob;
    ob = next;
  }
}

void bridge::shutdown_mpi() noexcept {
  for (auto& r : m_recv_reqs) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
  }
  // Sends still in flight: give them a second to be matched, then cancel.
  const auto deadline = clock::now() + std::chrono::seconds(1);
  for (auto& s : m_sends) {
    int flag = 0;
    while (s.req != MPI_REQUEST_NULL && flag == 0 && clock::now() < deadline) {
      MPI_Test(&s.req, &flag, MPI_STATUS_IGNORE);
    }
    if (s.req != MPI_REQUEST_NULL && flag == 0) {
      MPI_Cancel(&s.req);
      MPI_Request_free(&s.req);
    }
  }
  if (m_wave_req != MPI_REQUEST_NULL) MPI_Request_free(&m_wave_req);
  for (auto& b : m_recv_bufs) {
    if (b.p != nullptr) munmap(b.p, b.size);
    b = {};
  }
  if (m_data != MPI_COMM_NULL) MPI_Comm_free(&m_data);
  if (m_ctrl != MPI_COMM_NULL) MPI_Comm_free(&m_ctrl);
  if (m_owns_mpi) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Finalize();
  }
}

bool bridge::owner_here() const noexcept {
  switch (m_mode) {
    case progress_mode::caller:
      return std::this_thread::get_id() == m_owner_id;
    case progress_mode::worker:
      return strata::detail::current_worker() == m_comm;
    default:
      return std::this_thread::get_id() == m_thread.get_id();
  }
}

void bridge::wake_owner() noexcept {
  // seq_cst: pairs with the owner's store of m_sleeping and load of
  // m_posted in progress_thread (one of the two sees the other); for the
  // comm worker, with its parking announce and the seq_cst load of
  // m_posted in worker_ready.
  m_posted.fetch_add(1);
  if (m_comm != nullptr) {
    strata::detail::notify_worker(*m_comm);
    return;
  }
  if (m_sleeping.load()) {
    std::lock_guard lock(m_sleep_m);
    m_sleep_cv.notify_one();
  }
}

void bridge::nudge_owner() noexcept {
  if (m_comm != nullptr) {
    strata::detail::notify_worker(*m_comm);  // a seq_cst fence, then the worker's `sleeping`
    return;
  }
  // seq_cst: the hint before the load (see Wake-ups).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (m_sleeping.load(std::memory_order_relaxed)) wake_owner();
}

void bridge::nudge_open() noexcept {
  // seq_cst fence: the hint (has_open) before the loads (comm_worker.hpp,
  // Opened buffers; the progress thread publishes its wait the same way).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool asleep = m_comm != nullptr ? m_comm->sleeping.load(std::memory_order_relaxed) == 1
                                        : m_sleeping.load(std::memory_order_relaxed);
  if (!asleep) return;  // awake: its next wait's choice sees the hint
  const std::int64_t due =
      clock::now().time_since_epoch().count() +
      std::chrono::duration_cast<clock::duration>(std::chrono::microseconds(m_cfg.flush_delay_us)).count();
  if (m_wait_until.load(std::memory_order_relaxed) <= due) return;  // it wakes in time on its own
  if (m_comm != nullptr) {
    strata::detail::notify_worker(*m_comm);
  } else {
    wake_owner();
  }
}

}  // namespace strata::mpi::detail
