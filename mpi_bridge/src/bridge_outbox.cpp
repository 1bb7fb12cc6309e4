// The bridge's outboxes from the owner's side and the buffers they fill:
// opening and sealing a slot, copying out another thread's items, retiring
// quiet slots (Send path and Fast appends in bridge.hpp).
#include "bridge.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "bridge_util.hpp"

namespace strata::mpi::detail {

// A buffer of at least `bytes` (not value-initialised: every byte sent is
// written first), reused when one is at hand.
std::unique_ptr<std::byte[]> bridge::take_buffer(std::size_t bytes, std::size_t* capacity) {
  {
    std::lock_guard lock(m_pool_m);
    if (bytes <= m_slot_bytes) {
      if (!m_pool.empty()) {
        auto b = std::move(m_pool.back());
        m_pool.pop_back();
        *capacity = m_slot_bytes;
        return b;
      }
    } else {
      // The smallest that fits, if it is no more than twice what is asked.
      std::size_t best = m_big.size();
      for (std::size_t i = 0; i < m_big.size(); ++i) {
        const std::size_t c = m_big[i].first;
        if (c >= bytes && c / 2 <= bytes && (best == m_big.size() || c < m_big[best].first)) best = i;
      }
      if (best != m_big.size()) {
        auto b = std::move(m_big[best].second);
        *capacity = m_big[best].first;
        m_big_bytes -= *capacity;
        m_big.erase(m_big.begin() + static_cast<std::ptrdiff_t>(best));
        return b;
      }
    }
  }
  *capacity = bytes <= m_slot_bytes ? m_slot_bytes : (bytes + 4095) / 4096 * 4096;
  return std::unique_ptr<std::byte[]>(new std::byte[*capacity]);
}

void bridge::recycle(outgoing& o) noexcept {
  if (o.capacity == 0 || o.bytes == nullptr) return;
  std::lock_guard lock(m_pool_m);
  if (o.capacity == m_slot_bytes) {
    if (m_pool.size() < k_pool_buffers) m_pool.push_back(std::move(o.bytes));
  } else if (o.capacity <= k_big_bytes) {
    // Room made by dropping the oldest first.
    while (m_big_bytes + o.capacity > k_big_bytes && !m_big.empty()) {
      m_big_bytes -= m_big.front().first;
      m_big.erase(m_big.begin());
    }
    try {
      m_big.emplace_back(o.capacity, std::move(o.bytes));
      m_big_bytes += o.capacity;
    } catch (const std::bad_alloc&) {  // the buffer is freed with `o`
    }
  }
}

// Whether this kernel lets a retire make the producers' plain stores
// visible (Fast appends in bridge.hpp): once per process, registered for
// MEMBARRIER_CMD_PRIVATE_EXPEDITED (Linux 4.14).
bool fast_appends_possible() noexcept {
  static const bool ok = [] {
    const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return ok;
}

// Under ob.lock: dest's slot, which has no buffer, gets one for its first
// item and is listed; `stamp`: the time it opened is read (not for a buffer
// the same post seals: a clock reading is a sizeable part of a post).
void bridge::open_slot(outbox& ob, int dest, std::size_t item, bool stamp) {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  ob.open.push_back(dest);  // may throw: nothing else changed yet
  try {
    s.buf = take_buffer(std::max(m_slot_bytes, sizeof(buffer_header) + item), &s.capacity);
  } catch (...) {
    ob.open.pop_back();
    throw;
  }
  s.cursor.store(sizeof(buffer_header), std::memory_order_relaxed);  // relaxed: under lock, by its producer
  s.taken = sizeof(buffer_header);
  s.taken_items = 0;
  s.opened = stamp ? clock::now() : clock::time_point::max();
  s.open_at = static_cast<int>(ob.open.size() - 1);
  // relaxed: only this outbox's producer appends, and it listed the slot
  // itself (an adopting thread acquired the outbox whole).
  s.listed.store(true, std::memory_order_relaxed);
  ob.has_open.store(true, std::memory_order_relaxed);  // relaxed: a hint (see outbox)
}

// Under ob.lock: dest's slot is emptied and unlisted, its buffer (if any)
// given to the caller. Never while a fast append may run on it: by its
// producer, or in a retire after the membarrier and `busy`.
std::unique_ptr<std::byte[]> bridge::unlist_slot(outbox& ob, int dest) noexcept {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  s.listed.store(false, std::memory_order_relaxed);  // relaxed: see the caller's exclusion
  s.cursor.store(0, std::memory_order_relaxed);
  s.capacity = 0;
  s.taken = 0;
  s.taken_items = 0;
  const auto at = static_cast<std::size_t>(s.open_at);
  const int moved = ob.open.back();
  ob.open[at] = moved;
  ob.slots[static_cast<std::size_t>(moved)].open_at = static_cast<int>(at);
  ob.open.pop_back();
  s.open_at = -1;
  return std::move(s.buf);
}

// Under ob.lock, by the outbox's producer: what dest's buffer holds beyond
// `taken` goes whole (moved to the front first), then `then` (a large
// buffer's node) right after it, if given.
void bridge::seal_slot(outbox& ob, int dest, std::uint64_t peer_stats::*reason, std::unique_ptr<queued> node,
                       std::unique_ptr<queued> then) noexcept {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  const std::uint64_t c = s.cursor.load(std::memory_order_relaxed);  // relaxed: this thread's own writes
  std::size_t used = c & outbox::k_used_mask;
  const auto items = static_cast<std::uint32_t>(c >> 32) - s.taken_items;
  const std::size_t capacity = s.capacity;
  if (s.taken > sizeof(buffer_header)) {  // others copied out the items before `taken`
    std::memmove(s.buf.get() + sizeof(buffer_header), s.buf.get() + s.taken, used - s.taken);
    used -= s.taken - sizeof(buffer_header);
  }
  node->out = outgoing{unlist_slot(ob, dest), used, false, capacity};
  queue_sealed(ob, dest, reason, std::move(node), items, std::move(then));
}

// Under ob.lock, by anyone but the outbox's producer, which may be
// appending: the items between `taken` and the cursor, copied into a buffer
// of their own. The slot keeps its buffer. Throws (bad_alloc) before it
// changes anything.
void bridge::copy_slot(outbox& ob, int dest, std::uint64_t peer_stats::*reason) {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  // acquire: pairs with the fast append's release (the items' bytes).
  const std::uint64_t c = s.cursor.load(std::memory_order_acquire);
  const std::size_t bytes = (c & outbox::k_used_mask) - s.taken;
  auto node = std::make_unique<queued>();
  node->out.bytes = take_buffer(sizeof(buffer_header) + bytes, &node->out.capacity);
  node->out.size = sizeof(buffer_header) + bytes;
  std::memcpy(node->out.bytes.get() + sizeof(buffer_header), s.buf.get() + s.taken, bytes);
  const auto items = static_cast<std::uint32_t>(c >> 32) - s.taken_items;
  s.taken = c & outbox::k_used_mask;
  s.taken_items = static_cast<std::uint32_t>(c >> 32);
  s.opened = clock::time_point::max();  // the next item's time is read by the look that first sees it
  queue_sealed(ob, dest, reason, std::move(node), items, nullptr);
}

// Under ob.lock: a sealed buffer of `items` items (and a large one after
// it) queued on dest's link, its header written under the link's mutex.
void bridge::queue_sealed(outbox& ob, int dest, std::uint64_t peer_stats::*reason, std::unique_ptr<queued> node,
                          std::uint32_t items, std::unique_ptr<queued> then) noexcept {
  outgoing& o = node->out;
  // The CRCs before the link's mutex: they cover payloads only. None for
  // this rank's own buffers, which are not checked (run_self).
  const bool with_crc = m_cfg.crc && dest != m_rank;
  const std::uint32_t crc = with_crc ? crc32c(o.bytes.get() + sizeof(buffer_header), o.size - sizeof(buffer_header))
                                     : 0;
  const std::uint32_t then_crc =
      then != nullptr && with_crc
          ? crc32c(then->out.bytes.get() + sizeof(buffer_header), then->out.size - sizeof(buffer_header))
          : 0;
  if (dest == m_rank) {  // counted until run_self ran them (Local items)
    node->self_from = &ob;
    if (then != nullptr) then->self_from = &ob;
    ob.self_queued.fetch_add(then != nullptr ? 2 : 1, std::memory_order_relaxed);  // relaxed: read under ob.lock
  }
  lane& l = *m_lanes[static_cast<std::size_t>(dest)];
  lock_lane(l.m);
  std::lock_guard lock(l.m, std::adopt_lock);
  const auto rank = static_cast<std::uint32_t>(m_rank);
  write_header(o.bytes.get(), o.size, items, rank, stamp_epoch(), l.next_sequence++, with_crc, crc, false);
  m_pending_bytes.fetch_add(o.size, std::memory_order_relaxed);
  l.push(std::move(node));
  l.st.*reason += 1;
  if (then != nullptr) {
    outgoing& b = then->out;
    write_header(b.bytes.get(), b.size, 1, rank, stamp_epoch(), l.next_sequence++, with_crc, then_crc, true);
    m_pending_bytes.fetch_add(b.size, std::memory_order_relaxed);
    l.push(std::move(then));
    l.st.large_sent++;
  }
  l.has_sealed.store(true, std::memory_order_relaxed);  // relaxed: a hint (see lane)
}

// Seals what the outboxes' open buffers hold that is due: all of it when
// `force` (flush, quiescence), else, at most every look interval per
// outbox, what producers that went idle wrote, what is older than the
// delay, and in latency mode what waits for an idle link; then retires
// quiet slots.
std::size_t bridge::seal_due(bool force, bool open_only) {
  std::size_t n = 0;
  const auto now = force ? clock::time_point{} : m_now;  // routine looks run in a pass (m_now is its start)
  // acquire: pairs with adopt_outbox's release (a new outbox is seen whole).
  for (outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr; ob = ob->next) {
    // flush(): an outbox that shows no open buffer is not locked (each get()
    // flushes, and locking every thread's outbox moved their lines). The
    // caller's own hint is exact (its own writes); another thread's post
    // that it does not show yet is ordered after this flush.
    if (open_only && !ob->has_open.load(std::memory_order_relaxed)) continue;  // relaxed: a hint
    n += seal_outbox(*ob, force, now);
  }
  if (!force && now >= m_next_retire) retire_quiet(now);
  return n;
}

std::size_t bridge::seal_outbox(outbox& ob, bool force, clock::time_point now) {
  const auto delay = std::chrono::microseconds(m_cfg.flush_delay_us);
  if (force) {
    ob.lock.lock();
  } else {
    // Routine looks come from passes, under the MPI lock (next_look's).
    // relaxed: a hint; an outbox that just opened is looked at next time.
    if (!ob.has_open.load(std::memory_order_relaxed) || now < ob.next_look) return 0;
    if (!ob.lock.try_lock()) return 0;  // its producer is opening or sealing: the next look comes soon
    ob.next_look = now + std::min(delay / 4, std::chrono::microseconds(10));
  }
  std::lock_guard lock(ob.lock, std::adopt_lock);
  // The producer's own buffers go whole; another's are copied out (it may
  // be appending to them now).
  const bool mine = &ob == find_my_outbox();
  const std::uint64_t posts = ob.posts.load(std::memory_order_relaxed);
  const bool idle = posts == ob.seen_posts;
  ob.seen_posts = posts;
  if (!force && !idle) ob.quiet_since = now;
  std::size_t n = 0;
  for (std::size_t i = 0; i < ob.open.size();) {
    const int d = ob.open[i];
    outbox::slot& s = ob.slots[static_cast<std::size_t>(d)];
    // acquire: the items copy_slot copies (it loads the cursor again).
    if ((s.cursor.load(std::memory_order_acquire) & outbox::k_used_mask) == s.taken) {
      ++i;  // drained: it keeps its buffer until a retire or its producer's next seal
      continue;
    }
    if (!force && s.opened == clock::time_point::max()) s.opened = now;
    std::uint64_t peer_stats::*reason = nullptr;
    if (force || idle) {
      reason = &peer_stats::flush_idle;
    } else if (m_cfg.mode == send_mode::latency &&
               m_lanes[static_cast<std::size_t>(d)]->in_flight_hint.load(std::memory_order_relaxed) == 0 &&
               !m_lanes[static_cast<std::size_t>(d)]->has_sealed.load(std::memory_order_relaxed)) {
      reason = &peer_stats::flush_latency;
    } else if (now - s.opened >= delay) {
      reason = &peer_stats::flush_timer;
    }
    if (reason == nullptr) {
      ++i;
      continue;
    }
    if (reason == &peer_stats::flush_timer && !mine && s.listed.load(std::memory_order_relaxed)) {
      // Due while its producer may be streaming into it: the producer is
      // asked to seal it itself, whole (its next post takes the locked
      // path), rather than have it copied. Copied at the next look if it
      // is still there (the producer posts elsewhere, or was preempted).
      s.listed.store(false, std::memory_order_relaxed);  // relaxed: a request; nothing is freed
      ++i;
      continue;
    }
    try {
      if (mine) {
        seal_slot(ob, d, reason, std::make_unique<queued>());  // takes ob.open[i] out (the last one moves there)
      } else {
        copy_slot(ob, d, reason);
        ++i;
      }
    } catch (const std::bad_alloc&) {
      break;  // out of memory: the next look (or wave) tries again
    }
    ++n;
  }
  ob.has_open.store(!ob.open.empty(), std::memory_order_relaxed);  // relaxed: a hint (see outbox)
  return n;
}

// Under the MPI lock, in a routine look: unlists the drained slots of the
// outboxes that posted nothing for k_retire_after and gives their buffers
// back, so that their owners may sleep long again (Fast appends in
// bridge.hpp). One membarrier for all of them; none when no outbox is due.
void bridge::retire_quiet(clock::time_point now) {
  m_next_retire = now + std::chrono::duration_cast<clock::duration>(k_retire_after) / 4;
  m_retiring.clear();
  for (outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr; ob = ob->next) {
    if (!ob->has_open.load(std::memory_order_relaxed) || now - ob->quiet_since < k_retire_after) continue;
    if (!ob->lock.try_lock()) continue;
    bool drained = ob->posts.load(std::memory_order_relaxed) == ob->seen_posts;
    for (std::size_t i = 0; drained && i < ob->open.size(); ++i) {
      const outbox::slot& s = ob->slots[static_cast<std::size_t>(ob->open[i])];
      drained = (s.cursor.load(std::memory_order_acquire) & outbox::k_used_mask) == s.taken;
    }
    if (!drained || m_retiring.size() == m_retiring.capacity()) {
      ob->lock.unlock();
      continue;
    }
    for (const int d : ob->open) ob->slots[static_cast<std::size_t>(d)].listed.store(false, std::memory_order_relaxed);
    m_retiring.push_back(ob);  // its lock stays held until the end
  }
  if (m_retiring.empty()) return;
  // Every producer's `busy` store made before its load of `listed` is seen
  // after this; a producer that loads `listed` after it sees false.
  // If it fails (it cannot once registered, short of a kernel that changed
  // its mind), nothing is freed: every slot is listed again.
  const bool fenced = !m_fast_post || syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
  for (outbox* ob : m_retiring) {
    // acquire: pairs with the fast append's release of `busy` (its cursor).
    // A producer inside an append (it may have been preempted there, for
    // a time slice) keeps its buffers: they are listed again, not waited for.
    const bool busy = !fenced || ob->busy.load(std::memory_order_acquire);
    for (std::size_t i = ob->open.size(); i-- > 0;) {
      const int d = ob->open[i];
      outbox::slot& s = ob->slots[static_cast<std::size_t>(d)];
      if (busy || (s.cursor.load(std::memory_order_acquire) & outbox::k_used_mask) != s.taken) {
        s.listed.store(true, std::memory_order_relaxed);  // an append that began before the barrier: kept
        continue;
      }
      const std::size_t capacity = s.capacity;
      outgoing back{unlist_slot(*ob, d), 0, false, capacity};
      recycle(back);
      m_slots_retired.store(m_slots_retired.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    ob->has_open.store(!ob->open.empty(), std::memory_order_relaxed);  // relaxed: a hint (see outbox)
    ob->lock.unlock();
  }
  m_retiring.clear();
}

// Whether a buffer waits to be sealed (*open), or to be sent or finish
// sending (the result): hints, read after the owner's seq_cst fence before
// it sleeps (Wake-ups). A send in flight needs the owner's MPI calls to
// move on: without asynchronous progress, a rendezvous message (a large
// item) goes a fragment per call when the peers cannot copy directly, and
// an owner asleep for a millisecond a fragment made a 1 MiB round trip take
// 25 ms.
bool bridge::waiting_work(bool* open) {
  bool o = false;
  for (outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr; ob = ob->next) {
    o = o || ob->has_open.load(std::memory_order_relaxed);
  }
  *open = o;
  for (const auto& l : m_lanes) {
    if (l->has_sealed.load(std::memory_order_relaxed) || l->in_flight_hint.load(std::memory_order_relaxed) != 0) {
      return true;
    }
  }
  return false;
}

}  // namespace strata::mpi::detail
