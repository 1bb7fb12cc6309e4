// The bridge's receive path: persistent receives, the large tag, sequence
// order, dispatch of items and remote calls (see bridge.hpp).
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

#include <strata/runtime/ext/trace.hpp>

#include "bridge_util.hpp"

namespace strata::mpi::detail {

using strata::detail::trace_here;  // STRATA_TRACE (<strata/runtime/ext/trace.hpp>)
using strata::detail::trace_kind;
using strata::detail::trace_ring;

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

// Large buffers: probed per source, for each source whose notice said one
// is due, never on MPI_ANY_SOURCE. A probe of any source while one source
// was due took another source's large buffer ahead of its notice (its
// sender posts the buffer right behind the notice, and the notice may
// still wait in a buffer not received yet): it was rejected and lost, and
// that source's later buffers waited for its sequence number for ever (four
// ranks sending large actor messages to one another hung). A large buffer
// that no notice announced is left unmatched in MPI.
std::size_t bridge::probe_large() {
  std::size_t n = 0;
  for (std::size_t source = 0; source < m_in.size(); ++source) {
    if (m_in[source].large_due == 0) continue;
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    MPI_Improbe(static_cast<int>(source), k_tag_large, m_data, &flag, &msg, &st);
    if (flag != 0) n += receive_large(msg, st);
  }
  return n;
}

std::size_t bridge::receive_large(MPI_Message& msg, const MPI_Status& st) {
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  const std::size_t cap = m_cfg.max_message_bytes + sizeof(buffer_header) + sizeof(item_header);
  if (bytes < 0 || static_cast<std::size_t>(bytes) > cap) {
    char sink[sizeof(buffer_header)];
    MPI_Mrecv(sink, static_cast<int>(sizeof sink), MPI_BYTE, &msg, MPI_STATUS_IGNORE);  // consumed, truncated
    count_reject(reject::oversized);
    return 1;
  }
  const auto n = static_cast<std::size_t>(bytes);
  if (m_large_in_capacity < n || m_large_in == nullptr) {
    // Not value-initialised: MPI writes it; kept for the next large message.
    m_large_in_capacity = (n + 4095) / 4096 * 4096;
    m_large_in.reset(new std::byte[m_large_in_capacity]);
  }
  std::byte* buf = m_large_in.get();
  MPI_Mrecv(buf, bytes, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
  const checked c = check_buffer(buf, n, st.MPI_SOURCE, m_cfg.crc);
  inbound& in = m_in[static_cast<std::size_t>(st.MPI_SOURCE)];
  if (!c.ok || (c.header.flags & k_flag_large) == 0 || in.large_due == 0) {
    count_reject(c.ok ? reject::bad_flags : c.why);
    return 1;
  }
  in.large_due--;
  accept(st.MPI_SOURCE, buf, n, c.header);
  if (m_large_in_capacity > k_big_bytes) {
    m_large_in.reset();
    m_large_in_capacity = 0;
  }
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
  if (trace_ring* r = trace_here(m_rt.core(), "mpi progress")) {  // STRATA_TRACE
    r->instant(trace_kind::mpi_recv, static_cast<std::uint32_t>(source), 0, h.items, n);
  }
  lane& l = *m_lanes[static_cast<std::size_t>(source)];
  l.last_heard_ns.store(std::chrono::duration_cast<std::chrono::nanoseconds>(m_now - m_started).count(),
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

namespace {
// Inline calls finished on this thread and not yet counted done: counted in
// one step per buffer (or per local post) by count_inline_done, not one
// seq_cst increment per item. Counting an item done later than it finished
// only delays quiescence; counting it before would be the error.
thread_local std::uint64_t t_inline_done = 0;
}  // namespace

// A run of post_at items of one inline function without a result, gathered
// from a buffer and run at once by its entry's call_posted_run.
struct posted_run {
  posted_run(bridge& owner, int from) noexcept : b(owner), source(from) {}
  bridge& b;
  int source;
  const remote_entry* e = nullptr;
  std::uint64_t id = 0;
  std::size_t count = 0;
  posted_item items[k_posted_run]{};  // the first `count` gathered
};

// post_at's calls of inline functions, the bulk of a streaming rank's
// items, go a short way: the entry looked up once per run of items of one
// function, up to k_posted_run of them gathered and run by one call of
// call_posted_run, which decodes them all, then calls the function in a loop
// of its own (remote.hpp says why). Any other item runs the run gathered
// before it first, so items still run in buffer order.
//
// Actor messages go to their workers in batches, one per worker and buffer
// (bridge_actors.cpp).
void bridge::dispatch_buffer(int source, const std::byte* p, const buffer_header& h) {
  posted_run run(*this, source);
  actor_batches actors(*this);
  for_each_item(p, h, [&](handler k, const std::byte* q, std::size_t n) {
    if (k == handler::actor_message && batch_actor(source, q, n, actors)) return;
    if (k == handler::task && n >= 16 && read_u64(q + 8) == 0) {  // no request: post_at's
      const std::uint64_t id = read_u64(q);
      if (run.count == 0 || id != run.id) {
        run_gathered(run);
        const remote_entry* e = cached_remote(id);
        if (e != nullptr && e->run_inline && e->call_posted_run != nullptr) {
          run.e = e;
          run.id = id;
        } else {
          run.e = nullptr;
        }
      }
      if (run.e != nullptr) {
        run.items[run.count++] = {q + 16, n - 16};
        if (run.count == k_posted_run) run_gathered(run);
        return;
      }
    }
    run_gathered(run);
    dispatch_item(source, k, q, n);
  });
  run_gathered(run);
  count_inline_done();
}

void bridge::run_gathered(posted_run& run) noexcept {
  if (run.count == 0) return;
  const std::size_t n = run.count;
  run.count = 0;
  run.e->call_posted_run(
      run.items, n,
      [](void* ctx, std::size_t, const char* what) {
        auto& r = *static_cast<posted_run*>(ctx);
        r.b.report_posted_failure(r.source, r.e, what != nullptr ? what : "an exception that is not a std::exception");
      },
      &run);
  t_inline_done += n;
}

// A post_at's call of a function without a result, run here.
void bridge::run_posted(int source, const remote_entry* e, const std::byte* args, std::size_t n) {
  try {
    e->call_posted(args, n);
  } catch (const std::exception& ex) {
    report_posted_failure(source, e, ex.what());
  } catch (...) {
    report_posted_failure(source, e, "an exception that is not a std::exception");
  }
}

const remote_entry* cached_remote(std::uint64_t id) noexcept {
  // One entry (items of one kind come in runs); entries never move.
  thread_local std::uint64_t last_id = 0;
  thread_local const remote_entry* last = nullptr;
  if (id == last_id && last != nullptr) return last;
  const remote_entry* e = find_remote(id);
  last_id = id;
  last = e;
  return e;
}

void bridge::dispatch_item(int source, handler h, const std::byte* p, std::size_t n) {
  switch (h) {
    case handler::task: {
      if (n < 16) {
        count_reject(reject::bad_payload);
        return;
      }
      const std::uint64_t request = read_u64(p + 8);
      const remote_entry* e = cached_remote(read_u64(p));
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
        if (it == m_replies.end() || it->second.first != source || status > 2) {
          count_reject(reject::bad_payload);
          return;
        }
        sink = std::move(it->second.second);
        m_replies.erase(it);
        m_awaited.store(m_replies.size(), std::memory_order_relaxed);
      }
      reader r(p + 9, n - 9);
      if (status == 0) {
        try {
          sink->value(r);
        } catch (const decode_error& ex) {
          sink->error(std::string("strata::mpi: the reply from rank ") + std::to_string(source) +
                      " did not decode: " + ex.what());
        }
      } else if (status == 1) {
        sink->error(std::string(reinterpret_cast<const char*>(p + 9), n - 9));
      } else {
        sink->dead_letter(std::string(reinterpret_cast<const char*>(p + 9), n - 9));
      }
      m_done.fetch_add(1);  // seq_cst: after the future is filled (quiescence.hpp)
      return;
    }
    case handler::large_notice:
      m_in[static_cast<std::size_t>(source)].large_due++;
      return;
    case handler::goodbye: {
      // release: pairs with the producers' acquire in post/expect_reply.
      m_departed[static_cast<std::size_t>(source)].flag.store(true, std::memory_order_release);
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
        m_awaited.store(m_replies.size(), std::memory_order_relaxed);
      }
      for (auto& o : orphans) {
        o->error("strata::mpi: rank " + std::to_string(source) + " closed its session before it replied");
      }
      return;
    }
    case handler::actor_message:
      dispatch_actor(source, p, n);
      return;
    case handler::lookup:
      dispatch_lookup(source, p, n);
      return;
  }
  count_reject(reject::unknown_handler);
}

// Runs a remote function and posts its reply when one is asked for; the
// caller counts the item done after that (quiescence.hpp).
void bridge::invoke(int source, const remote_entry* e, std::uint64_t request, const std::byte* args,
                    std::size_t n) {
  if (request == 0) {
    invoke_posted(source, e, args, n);
    return;
  }
  scratch reply_buffer;  // no allocation per call once the thread's buffer has grown
  std::vector<std::byte>& reply = reply_buffer.bytes();
  reply.resize(9);
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
}

// A post_at's call: no reply to build; a result is encoded and dropped,
// an exception counted and reported here.
void bridge::invoke_posted(int source, const remote_entry* e, const std::byte* args, std::size_t n) {
  if (e->call_posted != nullptr) {
    run_posted(source, e, args, n);
    return;
  }
  scratch dropped;
  try {
    reader r(args, n);
    e->invoke(r, dropped.bytes());
  } catch (const std::exception& ex) {
    report_posted_failure(source, e, ex.what());
  } catch (...) {
    report_posted_failure(source, e, "an exception that is not a std::exception");
  }
}

void bridge::report_posted_failure(int source, const remote_entry* e, const char* what) noexcept {
  m_task_errors.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "strata::mpi: remote function '%s' threw on rank %d: %s (called from rank %d by post_at)\n",
               e->name.c_str(), m_rank, what, source);
}

// Now, on this thread (STRATA_MPI_REMOTE_INLINE): the MPI owner for an item
// from another rank, the posting thread for one of its own.
void bridge::run_inline(int source, const remote_entry* e, std::uint64_t request, const std::byte* args,
                        std::size_t n) {
  invoke(source, e, request, args, n);
  ++t_inline_done;
}

void bridge::count_inline_done() noexcept {
  if (t_inline_done == 0) return;
  const std::uint64_t k = t_inline_done;
  t_inline_done = 0;
  m_tasks_run.fetch_add(k, std::memory_order_relaxed);
  m_done.fetch_add(k);  // seq_cst: after the calls, their replies and every post they made (quiescence.hpp)
}

// Spawns the call on the runtime.
void bridge::run_task(int source, const remote_entry* e, std::uint64_t request, std::vector<std::byte> args) {
  m_tasks_live.fetch_add(1, std::memory_order_relaxed);
  m_rt.spawn([this, source, e, request, args = std::move(args)] {
    invoke(source, e, request, args.data(), args.size());
    m_tasks_run.fetch_add(1, std::memory_order_relaxed);
    m_done.fetch_add(1);  // seq_cst: after the reply and every post of the call (quiescence.hpp)
    // release: the task's last touch of the bridge (pairs with ~bridge's acquire load).
    m_tasks_live.fetch_sub(1, std::memory_order_release);
  });
}

std::uint64_t bridge::expect_reply(int rank, std::unique_ptr<reply_sink> sink) {
  if (rank < 0 || rank >= m_size) {
    throw usage_error("strata::mpi: rank " + std::to_string(rank) + " does not exist (ranks 0.." +
                      std::to_string(m_size - 1) + ")");
  }
  if (m_departed[static_cast<std::size_t>(rank)].flag.load(std::memory_order_acquire)) {
    throw remote_error("strata::mpi: rank " + std::to_string(rank) + " has closed its session (it said goodbye)");
  }
  const std::uint64_t id = m_next_request.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(m_replies_m);
  m_replies.emplace(id, std::make_pair(rank, std::move(sink)));
  m_awaited.store(m_replies.size(), std::memory_order_relaxed);
  return id;
}

}  // namespace strata::mpi::detail
