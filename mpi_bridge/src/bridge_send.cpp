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

#include "bridge_util.hpp"

namespace strata::mpi::detail {

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

}  // namespace strata::mpi::detail
