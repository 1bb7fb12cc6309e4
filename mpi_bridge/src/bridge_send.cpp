// The bridge's send path: lanes, sealing, MPI_Isend (see bridge.hpp).
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

namespace {

// The bridge whose pass runs on this thread (its inline handlers post from
// inside it).
thread_local const bridge* t_in_pass = nullptr;

// A producer's lock of its lane: spin a little first (the owner holds it for
// a seal or a take, well under a microsecond), then block.
void lock_lane(std::mutex& m) {
  for (int i = 0; i < 64; ++i) {
    if (m.try_lock()) return;
    __builtin_ia32_pause();
  }
  m.lock();
}

}  // namespace

pass_scope::pass_scope(const bridge* b) noexcept : m_outer(t_in_pass) { t_in_pass = b; }
bool bridge::in_pass_here() const noexcept { return t_in_pass == this; }
pass_scope::~pass_scope() { t_in_pass = m_outer; }

// ---- Send path --------------------------------------------------------------

void bridge::post(int dest, handler h, const std::byte* head, std::size_t hn, const std::byte* body,
                  std::size_t bn) {
  const std::size_t n = hn + bn;
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
  // Counted (st.items_sent, under the lane's mutex) when appended: before
  // the item can be sealed, sent or processed anywhere (quiescence.hpp).
  if (dest == m_rank) {
    post_local(h, head, hn, body, bn);
    return;
  }
  // Flow control: wait (making progress if this thread is the owner) while
  // too many sealed bytes wait to be sent.
  if (m_pending_bytes.load(std::memory_order_relaxed) > m_cfg.max_pending_bytes) {
    m_producer_waits.fetch_add(1, std::memory_order_relaxed);
    const bool owner = owner_here();  // progress=caller: the owner drains while it waits
    // An inline handler posting from inside a pass cannot wait for that
    // pass to drain: it goes over the cap (by what one buffer dispatches).
    while (!in_pass_here() && m_pending_bytes.load(std::memory_order_relaxed) > m_cfg.max_pending_bytes &&
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
    lock_lane(l.m);
    std::lock_guard lock(l.m, std::adopt_lock);
    l.posts++;
    l.st.items_sent++;
    l.st.bytes_sent += n;
    if (sizeof(buffer_header) + item > m_cfg.buffer_bytes) {
      // The large path: a notice in the ordered stream, then the item alone
      // (the notice goes in a buffer of its own when the open one is full).
      if (l.open.size() + sizeof(item_header) > m_cfg.buffer_bytes) seal_locked(l, dest, &peer_stats::flush_full);
      l.open.append(handler::large_notice, nullptr, 0);
      seal_locked(l, dest, &peer_stats::flush_full);
      buffer_builder big(sizeof(buffer_header) + item);
      big.append(h, head, hn, body, bn);
      outgoing o{big.seal(static_cast<std::uint32_t>(m_rank), stamp_epoch(),
                          l.next_sequence++, m_cfg.crc, true),
                 true};
      m_pending_bytes.fetch_add(o.bytes.size(), std::memory_order_relaxed);
      l.sealed.push_back(std::move(o));
      l.has_sealed.store(true, std::memory_order_relaxed);  // relaxed: a hint (see lane)
      l.st.large_sent++;
    } else {
      if (l.open.size() + item > m_cfg.buffer_bytes) seal_locked(l, dest, &peer_stats::flush_full);
      if (l.open.empty()) {
        l.opened = clock::now();
        l.has_open.store(true, std::memory_order_relaxed);  // relaxed: a hint (see lane)
      }
      l.open.append(h, head, hn, body, bn);
    }
  }
  if (t_in_pass == this) {
    m_owner_posted = true;  // the owner itself, in an inline handler: sealed at the end of this pass
  } else if (m_sleeping.load()) {  // seq_cst: after the append (see Wake-ups in bridge.hpp)
    wake_owner();
  }
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
  l.has_open.store(false, std::memory_order_relaxed);  // relaxed: hints (see lane)
  l.has_sealed.store(true, std::memory_order_relaxed);
  l.st.*reason += 1;
}

// An item for this rank: dispatched at once on the calling thread.
void bridge::post_local(handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn) {
  const std::size_t n = hn + bn;
  lane& l = *m_lanes[static_cast<std::size_t>(m_rank)];
  {
    std::lock_guard lock(l.m);
    l.st.items_sent++;
    l.st.bytes_sent += n;
    l.st.items_received++;
    l.st.bytes_received += n;
  }
  if (hn == 0) {
    dispatch_item(m_rank, h, body, n);
    return;
  }
  std::vector<std::byte> joined(n);
  std::memcpy(joined.data(), head, hn);
  if (bn != 0) std::memcpy(joined.data() + hn, body, bn);
  dispatch_item(m_rank, h, joined.data(), n);
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
  const auto look_every = std::min(delay / 4, std::chrono::microseconds(10));
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    std::unique_lock lock(l.m, std::defer_lock);
    if (force) {
      lock.lock();
    } else {
      // A routine look: only at an open buffer, and at most every look_every
      // (idle and timer seals need no finer grain than that).
      if (!l.has_open.load(std::memory_order_relaxed) || now < l.next_look) continue;
      if (!lock.try_lock()) continue;  // a producer is appending: not idle, and the next look comes soon
      l.next_look = now + look_every;
    }
    const bool idle = l.posts == l.seen_posts;
    l.seen_posts = l.posts;
    if (l.open.empty()) continue;
    if (force || idle) {
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

bool bridge::lanes_busy() {
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    std::lock_guard lock(l.m);
    if (!l.open.empty() || !l.sealed.empty()) return true;
  }
  return false;
}

std::size_t bridge::start_sends(bool block) {
  std::size_t n = 0;
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    while (l.in_flight < 2 && (block || l.has_sealed.load(std::memory_order_relaxed))) {
      outgoing o;
      {
        std::unique_lock lock(l.m, std::defer_lock);
        if (block) {
          lock.lock();
        } else if (!lock.try_lock()) {
          break;  // a producer holds it for an append; the next pass takes the buffer
        }
        if (l.sealed.empty()) break;
        o = std::move(l.sealed.front());
        l.sealed.pop_front();
        if (l.sealed.empty()) l.has_sealed.store(false, std::memory_order_relaxed);  // relaxed: a hint
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
      if (trace_ring* r = trace_here(m_rt.core(), "mpi progress")) {  // STRATA_TRACE
        buffer_header h{};
        if (slot->out.bytes.size() >= sizeof h) std::memcpy(&h, slot->out.bytes.data(), sizeof h);
        r->instant(trace_kind::mpi_send, static_cast<std::uint32_t>(d), 0, h.items, slot->out.bytes.size());
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

}  // namespace strata::mpi::detail
