// The bridge's life cycle and its send, receive and quiescence paths (the
// protocol is at the top of bridge.hpp; termination in quiescence.hpp).
#include "bridge.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <cstring>
#include <cstdlib>
#include <sched.h>
#include <sys/mman.h>

#include <cerrno>
#include <climits>

#include <strata/topology/error.hpp>

namespace strata::mpi::detail {

std::vector<std::string> remote_names(std::vector<std::string>* conflicts);

namespace {

const char* level_name(thread_level l) {
  switch (l) {
    case thread_level::single: return "MPI_THREAD_SINGLE";
    case thread_level::funneled: return "MPI_THREAD_FUNNELED";
    case thread_level::serialized: return "MPI_THREAD_SERIALIZED";
    case thread_level::multiple: return "MPI_THREAD_MULTIPLE";
  }
  return "?";
}

int to_mpi(thread_level l) {
  switch (l) {
    case thread_level::single: return MPI_THREAD_SINGLE;
    case thread_level::funneled: return MPI_THREAD_FUNNELED;
    case thread_level::serialized: return MPI_THREAD_SERIALIZED;
    case thread_level::multiple: return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SINGLE;
}

thread_level from_mpi(int l) {
  if (l >= MPI_THREAD_MULTIPLE) return thread_level::multiple;
  if (l >= MPI_THREAD_SERIALIZED) return thread_level::serialized;
  if (l >= MPI_THREAD_FUNNELED) return thread_level::funneled;
  return thread_level::single;
}

std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw config_error(std::string("strata::mpi: ") + what + " failed: " + mpi_error(rc));
}

std::uint64_t read_u64(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

bridge::bridge(runtime& rt, const config& c, const init& how) : m_rt(rt), m_cfg(c), m_started(clock::now()) {
  m_cfg.validate();
  start_mpi(how);
  try {
    m_lanes.reserve(static_cast<std::size_t>(m_size));
    for (int i = 0; i < m_size; ++i) {
      m_lanes.push_back(std::make_unique<lane>());
      m_lanes.back()->open.reset(m_cfg.buffer_bytes);
      m_lanes.back()->st.rank = i;
    }
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
  } catch (...) {
    shutdown_mpi();
    throw;
  }
  m_owner_id = std::this_thread::get_id();
  m_deadline_on = m_cfg.deadline_ms != 0 && (m_mode == progress_mode::thread || m_cfg.deadline_set);
  for (auto& l : m_lanes) l->last_sent = m_started;
  if (m_mode == progress_mode::thread) m_thread = std::thread([this] { progress_thread(); });
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
  if (m_cfg.progress == progress_mode::thread && !thread_ok) {
    fail(std::string("strata::mpi: STRATA_MPI_PROGRESS=thread needs MPI_THREAD_SERIALIZED or MULTIPLE; MPI provides ") +
         level_name(m_level) + " (use progress=caller, or initialize MPI at a higher level)");
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
  const std::vector<std::string> names = remote_names(&conflicts);
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
  for (int r = 0; r < m_size; ++r) same = same && all[2 * r] == mine[0] && all[2 * r + 1] == mine[1];
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
  std::string msg = "strata::mpi: the ranks run different remote-function registries (different binaries?):";
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
  // Tasks the bridge spawned reference it: let them finish (they only run
  // the function and post their reply).
  while (m_tasks_live.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  post_goodbyes();
  m_stop.store(true);
  wake_owner();
  if (m_thread.joinable()) m_thread.join();
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
  return m_mode == progress_mode::caller ? std::this_thread::get_id() == m_owner_id
                                         : std::this_thread::get_id() == m_thread.get_id();
}

void bridge::wake_owner() noexcept {
  // seq_cst: pairs with the owner's store of m_sleeping and load of
  // m_posted in progress_thread (one of the two sees the other).
  m_posted.fetch_add(1);
  if (m_sleeping.load()) {
    std::lock_guard lock(m_sleep_m);
    m_sleep_cv.notify_one();
  }
}

// ---- Send path --------------------------------------------------------------

void bridge::post(int dest, handler h, const std::byte* payload, std::size_t n) {
  if (dest < 0 || dest >= m_size) {
    throw usage_error("strata::mpi: rank " + std::to_string(dest) + " does not exist (ranks 0.." +
                      std::to_string(m_size - 1) + ")");
  }
  if (n > m_cfg.max_message_bytes) {
    throw usage_error("strata::mpi: a message of " + std::to_string(n) + " bytes exceeds max_message_bytes (" +
                      std::to_string(m_cfg.max_message_bytes) + ")");
  }
  if (m_lanes[static_cast<std::size_t>(dest)]->departed.load(std::memory_order_acquire)) {
    throw remote_error("strata::mpi: rank " + std::to_string(dest) + " has closed its session (it said goodbye)");
  }
  m_sent.fetch_add(1);  // seq_cst: counted before the item can be processed anywhere (quiescence.hpp)
  if (dest == m_rank) {
    post_local(h, payload, n);
    return;
  }
  // Flow control: wait (making progress if this thread is the owner) while
  // too many sealed bytes wait to be sent.
  if (m_pending_bytes.load(std::memory_order_relaxed) > m_cfg.max_pending_bytes) {
    m_producer_waits.fetch_add(1, std::memory_order_relaxed);
    const bool owner = owner_here();  // progress=caller: the owner drains while it waits
    // An inline handler posting from inside a pass cannot wait for that
    // pass to drain: it goes over the cap (by what one buffer dispatches).
    while (!(owner && m_in_pass) && m_pending_bytes.load(std::memory_order_relaxed) > m_cfg.max_pending_bytes &&
           !m_stop.load()) {
      if (owner) {
        pass();
      } else {
        wake_owner();
        std::this_thread::yield();
      }
    }
  }
  lane& l = *m_lanes[static_cast<std::size_t>(dest)];
  const std::size_t item = sizeof(item_header) + n;
  {
    std::lock_guard lock(l.m);
    l.st.items_sent++;
    l.st.bytes_sent += n;
    if (sizeof(buffer_header) + item > m_cfg.buffer_bytes) {
      // The large path: a notice in the ordered stream, then the item alone
      // (the notice goes in a buffer of its own when the open one is full).
      if (l.open.size() + sizeof(item_header) > m_cfg.buffer_bytes) seal_locked(l, dest, &peer_stats::flush_full);
      l.open.append(handler::large_notice, nullptr, 0);
      seal_locked(l, dest, &peer_stats::flush_full);
      buffer_builder big(sizeof(buffer_header) + item);
      big.append(h, payload, n);
      outgoing o{big.seal(static_cast<std::uint32_t>(m_rank), stamp_epoch(),
                          l.next_sequence++, m_cfg.crc, true),
                 true};
      m_pending_bytes.fetch_add(o.bytes.size(), std::memory_order_relaxed);
      l.sealed.push_back(std::move(o));
      l.st.large_sent++;
    } else {
      if (l.open.size() + item > m_cfg.buffer_bytes) seal_locked(l, dest, &peer_stats::flush_full);
      if (l.open.empty()) l.opened = clock::now();
      l.open.append(h, payload, n);
    }
  }
  wake_owner();
}

// Under l.m: seals the open buffer (if it holds anything) and queues it.
void bridge::seal_locked(lane& l, int, std::uint64_t peer_stats::*reason) {
  if (l.open.empty()) return;
  outgoing o{l.open.seal(static_cast<std::uint32_t>(m_rank), stamp_epoch(),
                         l.next_sequence++, m_cfg.crc, false),
             false};
  l.open.reset(m_cfg.buffer_bytes);
  m_pending_bytes.fetch_add(o.bytes.size(), std::memory_order_relaxed);
  l.sealed.push_back(std::move(o));
  l.st.*reason += 1;
}

// An item for this rank: dispatched at once on the calling thread.
void bridge::post_local(handler h, const std::byte* payload, std::size_t n) {
  lane& l = *m_lanes[static_cast<std::size_t>(m_rank)];
  {
    std::lock_guard lock(l.m);
    l.st.items_sent++;
    l.st.bytes_sent += n;
    l.st.items_received++;
    l.st.bytes_received += n;
  }
  dispatch_item(m_rank, h, payload, n);
}

void bridge::flush_all() {
  bool any = false;
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    std::lock_guard lock(l.m);
    any = any || !l.open.empty();
    seal_locked(l, d, &peer_stats::flush_idle);
  }
  if (any) wake_owner();
}

// The owner seals open buffers that are due: all of them when `force`
// (producers idle, flush, quiescence), else those older than the delay,
// and in latency mode those of idle links.
std::size_t bridge::seal_due(bool force) {
  std::size_t n = 0;
  const auto now = clock::now();
  const auto delay = std::chrono::microseconds(m_cfg.flush_delay_us);
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    std::lock_guard lock(l.m);
    if (l.open.empty()) continue;
    if (force) {
      seal_locked(l, d, &peer_stats::flush_idle);
    } else if (m_cfg.mode == send_mode::latency && l.in_flight == 0 && l.sealed.empty()) {
      seal_locked(l, d, &peer_stats::flush_latency);
    } else if (now - l.opened >= delay) {
      seal_locked(l, d, &peer_stats::flush_timer);
    } else {
      continue;
    }
    ++n;
  }
  return n;
}

std::size_t bridge::start_sends() {
  std::size_t n = 0;
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    while (l.in_flight < 2) {
      outgoing o;
      {
        std::lock_guard lock(l.m);
        if (l.sealed.empty()) break;
        o = std::move(l.sealed.front());
        l.sealed.pop_front();
        l.st.buffers_sent++;
      }
      send_slot* slot = nullptr;
      for (auto& s : m_sends) {
        if (s.req == MPI_REQUEST_NULL && s.dest < 0) {
          slot = &s;
          break;
        }
      }
      if (slot == nullptr) slot = &m_sends.emplace_back();
      slot->out = std::move(o);
      slot->dest = d;
      const int rc = MPI_Isend(slot->out.bytes.data(), static_cast<int>(slot->out.bytes.size()), MPI_BYTE, d,
                               slot->out.large ? k_tag_large : k_tag_data, m_data, &slot->req);
      if (rc != MPI_SUCCESS) {
        std::fprintf(stderr, "strata::mpi: rank %d: MPI_Isend to rank %d failed: %s\n", m_rank, d,
                     mpi_error(rc).c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 70);
      }
      l.in_flight++;
      l.last_sent = clock::now();
      ++n;
    }
  }
  return n;
}

std::size_t bridge::test_sends() {
  std::size_t n = 0;
  for (auto& s : m_sends) {
    if (s.dest < 0) continue;
    int flag = 0;
    MPI_Test(&s.req, &flag, MPI_STATUS_IGNORE);
    if (flag == 0) continue;
    m_pending_bytes.fetch_sub(s.out.bytes.size(), std::memory_order_relaxed);
    m_lanes[static_cast<std::size_t>(s.dest)]->in_flight--;
    s.dest = -1;
    s.req = MPI_REQUEST_NULL;
    std::vector<std::byte>().swap(s.out.bytes);
    ++n;
  }
  return n;
}

// ---- Receive path -----------------------------------------------------------

std::size_t bridge::test_receives() {
  int count = 0;
  const int rc = MPI_Testsome(static_cast<int>(m_recv_reqs.size()), m_recv_reqs.data(), &count, m_indices.data(),
                              m_statuses.data());
  if (count == MPI_UNDEFINED || count <= 0) return 0;
  for (int k = 0; k < count; ++k) {
    const int i = m_indices[static_cast<std::size_t>(k)];
    MPI_Status& st = m_statuses[static_cast<std::size_t>(k)];
    const auto slot = static_cast<std::size_t>(i);
    if (rc == MPI_ERR_IN_STATUS && st.MPI_ERROR != MPI_SUCCESS) {
      // Longer than max_message_bytes: MPI truncated it, and the request
      // is gone (see m_recv_bufs).
      count_reject(reject::oversized);
      repost(slot);
      continue;
    }
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    const std::byte* p = m_recv_bufs[slot].p;
    const auto n = bytes < 0 ? std::size_t{0} : static_cast<std::size_t>(bytes);
    if (n > m_cfg.buffer_bytes) {
      count_reject(reject::oversized);  // no sender of the protocol sends more than a buffer on this tag
      // Give back the pages the message touched beyond a buffer.
      const std::size_t page = 4096, keep = (m_cfg.buffer_bytes + page - 1) / page * page;
      if (n > keep) madvise(m_recv_bufs[slot].p + keep, (n - keep + page - 1) / page * page, MADV_DONTNEED);
    } else {
      const checked c = check_buffer(p, n, st.MPI_SOURCE, m_cfg.crc);
      if (!c.ok) {
        count_reject(c.why);
      } else if ((c.header.flags & k_flag_large) != 0) {
        count_reject(reject::bad_flags);  // a large buffer on the data tag
      } else {
        accept(st.MPI_SOURCE, p, n, c.header);
      }
    }
    MPI_Start(&m_recv_reqs[static_cast<std::size_t>(i)]);
  }
  return static_cast<std::size_t>(count);
}

// A receive that completed in error: a new persistent request on a fresh
// buffer in its place (the old buffer stays mapped: MPI may still write it).
void bridge::repost(std::size_t i) {
  auto& req = m_recv_reqs[i];
  if (req != MPI_REQUEST_NULL) MPI_Request_free(&req);
  void* p = mmap(nullptr, m_recv_capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "strata::mpi: rank %d: cannot reserve a receive buffer: %s\n", m_rank, std::strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 71);
  }
  m_recv_bufs[i] = {static_cast<std::byte*>(p), m_recv_capacity};
  check(MPI_Recv_init(m_recv_bufs[i].p, static_cast<int>(m_recv_capacity), MPI_BYTE, MPI_ANY_SOURCE, k_tag_data,
                      m_data, &req),
        "MPI_Recv_init");
}

std::size_t bridge::probe_large() {
  bool due = false;
  for (const auto& in : m_in) due = due || in.large_due > 0;
  if (!due) return 0;
  int flag = 0;
  MPI_Message msg;
  MPI_Status st;
  MPI_Improbe(MPI_ANY_SOURCE, k_tag_large, m_data, &flag, &msg, &st);
  if (flag == 0) return 0;
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  const std::size_t cap = m_cfg.max_message_bytes + sizeof(buffer_header) + sizeof(item_header);
  if (bytes < 0 || static_cast<std::size_t>(bytes) > cap) {
    char sink[sizeof(buffer_header)];
    MPI_Mrecv(sink, static_cast<int>(sizeof sink), MPI_BYTE, &msg, MPI_STATUS_IGNORE);  // consumed, truncated
    count_reject(reject::oversized);
    return 1;
  }
  std::vector<std::byte> buf(static_cast<std::size_t>(bytes));
  MPI_Mrecv(buf.data(), bytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
  const checked c = check_buffer(buf.data(), buf.size(), st.MPI_SOURCE, m_cfg.crc);
  inbound& in = m_in[static_cast<std::size_t>(st.MPI_SOURCE)];
  if (!c.ok || (c.header.flags & k_flag_large) == 0 || in.large_due == 0) {
    count_reject(c.ok ? reject::bad_flags : c.why);
    return 1;
  }
  in.large_due--;
  accept(st.MPI_SOURCE, buf.data(), buf.size(), c.header);
  return 1;
}

// A checked buffer from `source`: dispatched in sequence order.
void bridge::accept(int source, const std::byte* p, std::size_t n, const buffer_header& h) {
  inbound& in = m_in[static_cast<std::size_t>(source)];
  constexpr std::uint64_t k_window = 1u << 16;
  if (h.sequence < in.expected || in.held.count(h.sequence) != 0) {
    count_reject(reject::stale_sequence);
    return;
  }
  if (h.sequence >= in.expected + k_window) {
    count_reject(reject::sequence_window);
    return;
  }
  lane& l = *m_lanes[static_cast<std::size_t>(source)];
  l.last_heard_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - m_started).count(),
                        std::memory_order_relaxed);
  {
    std::lock_guard lock(l.m);
    l.st.buffers_received++;
    l.st.bytes_received += h.bytes;
    l.st.items_received += h.items;
  }
  // An empty buffer (a heartbeat) may be sealed just before its sender's
  // last wave completes and arrive after ours did: only items count.
  if (h.items != 0 && h.epoch < m_epoch.load(std::memory_order_relaxed)) {
    m_late_epoch.fetch_add(1, std::memory_order_relaxed);
  }
  // Lamport's rule: what this rank sends from now on is at least as late as
  // what it has received (a rank whose last wave is still being tested may
  // already run items a faster rank sent after its own return).
  std::uint32_t seen = m_seen_epoch.load(std::memory_order_relaxed);
  while (h.epoch > seen && !m_seen_epoch.compare_exchange_weak(seen, h.epoch, std::memory_order_relaxed)) {
  }
  if (h.sequence != in.expected) {
    in.held.emplace(h.sequence, std::vector<std::byte>(p, p + n));
    return;
  }
  dispatch_buffer(source, p, h);
  in.expected++;
  while (!in.held.empty() && in.held.begin()->first == in.expected) {
    std::vector<std::byte> b = std::move(in.held.begin()->second);
    in.held.erase(in.held.begin());
    buffer_header hh;
    std::memcpy(&hh, b.data(), sizeof hh);
    dispatch_buffer(source, b.data(), hh);
    in.expected++;
  }
}

void bridge::dispatch_buffer(int source, const std::byte* p, const buffer_header& h) {
  for_each_item(p, h, [&](handler k, const std::byte* q, std::size_t n) { dispatch_item(source, k, q, n); });
}

void bridge::dispatch_item(int source, handler h, const std::byte* p, std::size_t n) {
  switch (h) {
    case handler::task: {
      if (n < 16) {
        count_reject(reject::bad_payload);
        return;
      }
      const std::uint64_t id = read_u64(p), request = read_u64(p + 8);
      // One-entry cache (items of one kind come in runs); entries are stable.
      thread_local std::uint64_t last_id = 0;
      thread_local const remote_entry* last = nullptr;
      const remote_entry* e = id == last_id && last != nullptr ? last : find_remote(id);
      last_id = id;
      last = e;
      if (e == nullptr) {
        count_reject(reject::bad_payload);
        return;
      }
      if (e->run_inline) {
        run_inline(source, e, request, p + 16, n - 16);
      } else {
        run_task(source, e, request, std::vector<std::byte>(p + 16, p + n));
      }
      return;
    }
    case handler::reply: {
      if (n < 9) {
        count_reject(reject::bad_payload);
        return;
      }
      const std::uint64_t request = read_u64(p);
      const auto status = static_cast<std::uint8_t>(p[8]);
      std::unique_ptr<reply_sink> sink;
      {
        std::lock_guard lock(m_replies_m);
        auto it = m_replies.find(request);
        if (it == m_replies.end() || it->second.first != source || status > 1) {
          count_reject(reject::bad_payload);
          return;
        }
        sink = std::move(it->second.second);
        m_replies.erase(it);
      }
      reader r(p + 9, n - 9);
      if (status == 0) {
        try {
          sink->value(r);
        } catch (const decode_error& ex) {
          sink->error(std::string("strata::mpi: the reply from rank ") + std::to_string(source) +
                      " did not decode: " + ex.what());
        }
      } else {
        sink->error(std::string(reinterpret_cast<const char*>(p + 9), n - 9));
      }
      m_done.fetch_add(1);  // seq_cst: after the future is filled (quiescence.hpp)
      return;
    }
    case handler::large_notice:
      m_in[static_cast<std::size_t>(source)].large_due++;
      return;
    case handler::goodbye: {
      // release: pairs with the producers' acquire in post/expect_reply.
      m_lanes[static_cast<std::size_t>(source)]->departed.store(true, std::memory_order_release);
      std::vector<std::unique_ptr<reply_sink>> orphans;
      {
        std::lock_guard lock(m_replies_m);
        for (auto it = m_replies.begin(); it != m_replies.end();) {
          if (it->second.first == source) {
            orphans.push_back(std::move(it->second.second));
            it = m_replies.erase(it);
          } else {
            ++it;
          }
        }
      }
      for (auto& o : orphans) {
        o->error("strata::mpi: rank " + std::to_string(source) + " closed its session before it replied");
      }
      return;
    }
    case handler::actor_message:
      count_reject(reject::bad_payload);  // remote actors: issue 20, item 3 (not built yet)
      return;
  }
  count_reject(reject::unknown_handler);
}

// Runs a remote function and posts its reply when one is asked for; the
// item counts as done only after that (quiescence.hpp).
void bridge::invoke(int source, const remote_entry* e, std::uint64_t request, const std::byte* args,
                    std::size_t n) {
  std::vector<std::byte> reply(9);
  std::memcpy(reply.data(), &request, sizeof request);
  reply[8] = std::byte{0};
  const auto fail_with = [&](const std::string& text) {
    reply.resize(9);
    reply[8] = std::byte{1};
    reply.insert(reply.end(), reinterpret_cast<const std::byte*>(text.data()),
                 reinterpret_cast<const std::byte*>(text.data() + text.size()));
  };
  std::string what;
  bool failed = false;
  try {
    reader r(args, n);
    e->invoke(r, reply);
  } catch (const std::exception& ex) {
    failed = true;
    what = ex.what();
  } catch (...) {
    failed = true;
    what = "an exception that is not a std::exception";
  }
  if (failed) {
    m_task_errors.fetch_add(1, std::memory_order_relaxed);
    const std::string text = "strata::mpi: remote function '" + e->name + "' threw on rank " +
                             std::to_string(m_rank) + ": " + what;
    fail_with(text);
    if (request == 0) std::fprintf(stderr, "%s (called from rank %d by post_at)\n", text.c_str(), source);
  }
  if (request != 0) {
    try {
      post(source, handler::reply, reply.data(), reply.size());
    } catch (const std::exception& ex) {  // a result above max_message_bytes
      fail_with("strata::mpi: the result of '" + e->name + "' on rank " + std::to_string(m_rank) +
                " could not be sent: " + ex.what());
      post(source, handler::reply, reply.data(), reply.size());
    }
  }
  m_tasks_run.fetch_add(1, std::memory_order_relaxed);
  m_done.fetch_add(1);  // seq_cst: after the reply and every post of the call (quiescence.hpp)
}

// On the MPI owner, now (STRATA_MPI_REMOTE_INLINE).
void bridge::run_inline(int source, const remote_entry* e, std::uint64_t request, const std::byte* args,
                        std::size_t n) {
  invoke(source, e, request, args, n);
}

// Spawns the call on the runtime.
void bridge::run_task(int source, const remote_entry* e, std::uint64_t request, std::vector<std::byte> args) {
  m_tasks_live.fetch_add(1, std::memory_order_relaxed);
  m_rt.spawn([this, source, e, request, args = std::move(args)] {
    invoke(source, e, request, args.data(), args.size());
    // release: the task's last touch of the bridge (pairs with ~bridge's acquire load).
    m_tasks_live.fetch_sub(1, std::memory_order_release);
  });
}

std::uint64_t bridge::expect_reply(int rank, std::unique_ptr<reply_sink> sink) {
  if (rank < 0 || rank >= m_size) {
    throw usage_error("strata::mpi: rank " + std::to_string(rank) + " does not exist (ranks 0.." +
                      std::to_string(m_size - 1) + ")");
  }
  if (m_lanes[static_cast<std::size_t>(rank)]->departed.load(std::memory_order_acquire)) {
    throw remote_error("strata::mpi: rank " + std::to_string(rank) + " has closed its session (it said goodbye)");
  }
  const std::uint64_t id = m_next_request.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(m_replies_m);
  m_replies.emplace(id, std::make_pair(rank, std::move(sink)));
  return id;
}

// ---- Quiescence -------------------------------------------------------------

// Returns 1 when a wave completed (not counted as traffic by pass()).
//
// Pacing: the first wave of a call starts at once; after a wave that did
// not end it, the next starts as soon as this rank's counters moved (an
// item arrived or finished here), else after a delay that doubles from
// 5 µs to 1 ms. Every rank joins every wave (MPI_Iallreduce is
// collective), so a slow rank only delays the wave; meanwhile a rank that
// is waiting for its peers polls without spinning the CPU away from the
// workers that run the items in flight.
std::size_t bridge::step_quiescence() {
  if (!m_quiesce_wanted.load(std::memory_order_acquire)) return 0;
  if (m_wave_req == MPI_REQUEST_NULL) {
    const auto now = clock::now();
    // Done read before sent, both seq_cst (either order is sound by the
    // two-wave argument; this one makes a first wave with sent == done
    // likelier to be the true state).
    const std::uint64_t done = m_done.load(), sent = m_sent.load();
    const bool moved = done != m_wave_local[1] || sent != m_wave_local[0];
    if (m_waves_this_call != 0 && !moved && now < m_next_wave) return 0;
    m_wave_pace = moved || m_waves_this_call == 0 ? std::chrono::microseconds(5)
                                                  : std::min<std::chrono::microseconds>(m_wave_pace * 2,
                                                                                       std::chrono::milliseconds(1));
    seal_due(true);
    start_sends();
    m_wave_local[1] = m_done.load();
    m_wave_local[0] = m_sent.load();
    check(MPI_Iallreduce(m_wave_local, m_wave_global, 2, MPI_UINT64_T, MPI_SUM, m_ctrl, &m_wave_req),
          "MPI_Iallreduce (quiescence wave)");
    ++m_waves_this_call;
    return 0;
  }
  int flag = 0;
  MPI_Test(&m_wave_req, &flag, MPI_STATUS_IGNORE);
  if (flag == 0) return 0;
  m_wave_req = MPI_REQUEST_NULL;
  m_next_wave = clock::now() + m_wave_pace;
  m_rounds.fetch_add(1, std::memory_order_relaxed);
  if (m_detector.on_wave({m_wave_global[0], m_wave_global[1]})) {
    m_quiesce_wanted.store(false, std::memory_order_relaxed);
    m_waves_this_call = 0;
    {
      std::lock_guard lock(m_done_m);
      m_epoch.fetch_add(1, std::memory_order_release);  // release: pairs with the waiter's acquire
    }
    m_done_cv.notify_all();
  }
  return 1;
}

void bridge::wait_quiescent() {
  m_quiesce_calls.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t epoch = m_epoch.load(std::memory_order_acquire);
  if (m_mode == progress_mode::caller) {
    if (!owner_here()) {
      throw usage_error("strata::mpi: under progress=caller, wait_quiescent runs on the session's thread");
    }
    m_detector.begin();
    m_quiesce_wanted.store(true, std::memory_order_release);
    while (m_epoch.load(std::memory_order_acquire) == epoch) {
      if (pass() == 0) sched_yield();  // let the workers run what is in flight
    }
    return;
  }
  m_detector.begin();  // the owner reads it only once m_quiesce_wanted is set (release below)
  m_quiesce_wanted.store(true, std::memory_order_release);  // release: publishes begin() to the owner
  wake_owner();
  std::unique_lock lock(m_done_m);
  m_done_cv.wait(lock, [&] { return m_epoch.load(std::memory_order_acquire) != epoch; });
}

// ---- The owner --------------------------------------------------------------

std::size_t bridge::pass() {
  // Re-entry (an inline handler that posts past the pending cap, a reply
  // sink that calls back in) would nest MPI calls of one pass inside
  // another: refused; the outer pass goes on.
  if (m_in_pass) return 0;
  std::lock_guard lock(m_mpi);
  m_in_pass = true;
  struct leave {
    bool& flag;
    ~leave() { flag = false; }
  } guard{m_in_pass};
  const std::uint64_t posted = m_posted.load();
  const bool producers_idle = posted == m_seen_posted;
  m_seen_posted = posted;
  std::size_t n = test_receives();
  n += probe_large();
  // What inline handlers posted during this pass (replies, forwards): the
  // owner is their producer and it is done producing for this pass.
  const bool owner_posted = m_posted.load() != posted;
  n += test_sends();
  n += seal_due(producers_idle || owner_posted);
  n += start_sends();
  // A completed wave is progress for the caller (progress=caller loops on
  // pass()) but not traffic: it must not keep the progress thread spinning.
  m_last_pass_waves = step_quiescence();
  const auto now = clock::now();
  if (now >= m_next_peer_check) check_peers(now);
  return n;
}

// Heartbeats and the deadline (config::heartbeat_ms, deadline_ms), every
// tenth of a heartbeat.
void bridge::check_peers(clock::time_point now) {
  const auto beat = std::chrono::milliseconds(m_cfg.heartbeat_ms);
  m_next_peer_check = now + beat / 10;
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    if (l.departed.load(std::memory_order_relaxed)) continue;
    if (now - l.last_sent >= beat) {
      std::lock_guard lock(l.m);
      if (l.sealed.empty() && l.open.empty()) {
        // An empty buffer: it takes a sequence number like any other, so
        // it is checked and ordered like any other.
        outgoing o{l.open.seal(static_cast<std::uint32_t>(m_rank), stamp_epoch(),
                               l.next_sequence++, m_cfg.crc, false),
                   false};
        l.open.reset(m_cfg.buffer_bytes);
        m_pending_bytes.fetch_add(o.bytes.size(), std::memory_order_relaxed);
        l.sealed.push_back(std::move(o));
      }
    }
    if (!m_deadline_on) continue;
    const std::int64_t heard = l.last_heard_ns.load(std::memory_order_relaxed);
    const auto since = heard < 0 ? m_started : m_started + std::chrono::nanoseconds(heard);
    if (now - since > std::chrono::milliseconds(m_cfg.deadline_ms)) silent_peer(d, heard, now);
  }
}

// A peer silent past the deadline: it died (kill -9, a node lost) or was
// stopped. Without ULFM nothing can recover the job; fail fast and say so.
void bridge::silent_peer(int peer, std::int64_t heard_ns, clock::time_point now) {
  const double up = std::chrono::duration<double>(now - m_started).count();
  const double silent = heard_ns < 0 ? up : up - 1e-9 * static_cast<double>(heard_ns);
  const auto wall = std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                           std::chrono::duration<double>(silent));
  const std::time_t t = std::chrono::system_clock::to_time_t(wall);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%H:%M:%S UTC", &tm);
  std::fprintf(stderr,
               "strata::mpi: rank %d: rank %d has been silent for %.1f s (%s %s; deadline %u ms, "
               "STRATA_MPI_DEADLINE_MS): it died or was stopped; exiting with status 75\n",
               m_rank, peer, silent, heard_ns < 0 ? "never heard since the session started at" : "last heard at", when,
               m_cfg.deadline_ms);
  std::fflush(stderr);
  std::_Exit(75);
}

// Tells every peer this rank is leaving (so its silence is not a failure,
// and what it still asks of this rank fails at once), then lets the
// progress drain the buffers for up to two seconds.
void bridge::post_goodbyes() {
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    std::lock_guard lock(l.m);
    l.open.append(handler::goodbye, nullptr, 0);
    seal_locked(l, d, &peer_stats::flush_idle);
  }
  wake_owner();
  const auto until = clock::now() + std::chrono::seconds(2);
  while (m_pending_bytes.load(std::memory_order_relaxed) != 0 && clock::now() < until) {
    if (m_mode == progress_mode::caller) {
      pass();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

void bridge::progress_thread() {
  unsigned idle = 0;
  auto sleep_for = std::chrono::microseconds(50);
  while (!m_stop.load(std::memory_order_relaxed)) {
    if (pass() != 0) {
      idle = 0;
      sleep_for = std::chrono::microseconds(50);
      continue;
    }
    ++idle;
    if (idle < 200) continue;  // spin: a reply or the next message is usually a few µs away
    if (idle < 2000) {
      sched_yield();
      continue;
    }
    std::unique_lock lock(m_sleep_m);
    m_sleeping.store(true);  // seq_cst: pairs with wake_owner's bump of m_posted and load of m_sleeping
    if (m_posted.load() == m_seen_posted && !m_stop.load()) {
      m_sleep_cv.wait_for(lock, sleep_for);
      sleep_for = std::min<std::chrono::microseconds>(sleep_for * 2, std::chrono::milliseconds(1));
    }
    m_sleeping.store(false);
    idle = 100;  // back to a short spin
  }
}

session_stats bridge::stats() const {
  session_stats s;
  s.rank = m_rank;
  s.size = m_size;
  s.thread_level = level_name(m_level);
  s.progress = m_mode == progress_mode::thread ? "thread" : "caller";
  const auto now = clock::now();
  for (int r = 0; r < m_size; ++r) {
    lane& l = *m_lanes[static_cast<std::size_t>(r)];
    std::lock_guard lock(l.m);
    peer_stats p = l.st;
    const std::int64_t heard = l.last_heard_ns.load(std::memory_order_relaxed);
    p.last_heard_s =
        heard < 0 ? -1.0 : std::chrono::duration<double>(now - m_started).count() - static_cast<double>(heard) * 1e-9;
    s.peers.push_back(p);
  }
  for (std::size_t i = 0; i < k_reject_reasons; ++i) {
    s.rejects.emplace_back(std::string(reject_name(static_cast<reject>(i))),
                           m_rejects[i].load(std::memory_order_relaxed));
  }
  s.rejects.emplace_back("late_epoch", m_late_epoch.load(std::memory_order_relaxed));
  s.termination_rounds = m_rounds.load(std::memory_order_relaxed);
  s.quiescence_calls = m_quiesce_calls.load(std::memory_order_relaxed);
  s.tasks_run = m_tasks_run.load(std::memory_order_relaxed);
  s.producer_waits = m_producer_waits.load(std::memory_order_relaxed);
  return s;
}

}  // namespace strata::mpi::detail
