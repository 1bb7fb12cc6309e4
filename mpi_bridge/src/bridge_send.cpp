// The bridge's send path: outboxes, sealing, MPI_Isend (see bridge.hpp).
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
#include <unordered_set>

#include <strata/runtime/ext/trace.hpp>

#include "bridge_util.hpp"

namespace strata::mpi::detail {

using strata::detail::trace_here;  // STRATA_TRACE (<strata/runtime/ext/trace.hpp>)
using strata::detail::trace_kind;
using strata::detail::trace_ring;

namespace {

// How far ahead of an outbox's write cursor post() prefetches (bytes).
constexpr std::size_t k_write_ahead = 256;

// The bridge whose pass runs on this thread (its inline handlers post from
// inside it).
thread_local const bridge* t_in_pass = nullptr;
// The bridge whose MPI lock this thread holds in serialized(): it may not
// send (the lock is taken) nor wait for the owner (which waits for it).
thread_local const bridge* t_serialized = nullptr;
// The bridge this thread last helped in get() (help_end), until its next
// post there, which goes at once when the link is idle.
thread_local const bridge* t_after_help = nullptr;

// The bridges alive now, by id: a thread that ends marks its outboxes
// abandoned only in bridges still alive (under the mutex, so a bridge's
// destructor, which removes its id under it too, never races with that).
struct live_bridges {
  std::mutex m;
  std::unordered_set<std::uint64_t> ids;
};
live_bridges& live() {
  static auto* l = new live_bridges;  // never destroyed: threads may end after static destruction began
  return *l;
}
std::atomic<std::uint64_t> g_next_bridge_id{1};  // relaxed: only unique

// The calling thread's outboxes, by bridge id; the last one used first, in
// a thread_local of its own: trivially destructible, so reading it is a
// load from the thread pointer, where a thread_local with a destructor goes
// through its init wrapper on every access (a twentieth of a posting
// thread's samples).
struct outbox_entry {
  std::uint64_t bridge = 0;
  outbox* ob = nullptr;
};
thread_local outbox_entry t_last_outbox;
struct thread_outboxes {
  using entry = outbox_entry;
  std::vector<entry> all;
  ~thread_outboxes() {
    t_last_outbox = {};  // its outbox is about to be given up
    live_bridges& l = live();
    std::lock_guard lock(l.m);
    for (const auto& e : all) {
      // release: the next producer to adopt it (acquire) sees its slots as
      // this thread left them.
      if (l.ids.count(e.bridge) != 0) e.ob->abandoned.store(true, std::memory_order_release);
    }
  }
};
thread_local thread_outboxes t_outboxes;

}  // namespace

void bridge::mark_after_help() noexcept { t_after_help = this; }

pass_scope::pass_scope(const bridge* b) noexcept : m_outer(t_in_pass) { t_in_pass = b; }
bool bridge::in_pass_here() const noexcept { return t_in_pass == this; }
pass_scope::~pass_scope() { t_in_pass = m_outer; }

void bridge::lock_serialized() {
  m_mpi.lock();
  t_serialized = this;
}
void bridge::unlock_serialized() noexcept {
  t_serialized = nullptr;
  m_mpi.unlock();
}

void spin_lock::lock_contended() noexcept {
  for (unsigned i = 0;; ++i) {
    if (try_lock()) return;
    if (i < 128) {
      __builtin_ia32_pause();
    } else {
      sched_yield();  // the holder may have been preempted (more threads than cores)
    }
  }
}

// ---- Outboxes -----------------------------------------------------------------

std::uint64_t new_bridge_id() {
  const std::uint64_t id = g_next_bridge_id.fetch_add(1, std::memory_order_relaxed);
  live_bridges& l = live();
  std::lock_guard lock(l.m);
  l.ids.insert(id);
  return id;
}

void forget_bridge_id(std::uint64_t id) noexcept {
  live_bridges& l = live();
  std::lock_guard lock(l.m);
  l.ids.erase(id);
}

outbox* bridge::find_my_outbox() noexcept {
  if (t_last_outbox.bridge == m_id) return t_last_outbox.ob;
  for (const auto& e : t_outboxes.all) {
    if (e.bridge == m_id) return e.ob;
  }
  return nullptr;
}

outbox& bridge::my_outbox() {
  if (t_last_outbox.bridge == m_id) [[likely]] return *t_last_outbox.ob;
  return my_outbox_slow();
}

outbox& bridge::my_outbox_slow() {
  for (const auto& e : t_outboxes.all) {
    if (e.bridge == m_id) {
      t_last_outbox = e;
      return *e.ob;
    }
  }
  return adopt_outbox();
}

// The calling thread's first post to this bridge: an outbox whose thread
// ended, or a new one.
outbox& bridge::adopt_outbox() {
  outbox* ob = nullptr;
  {
    std::lock_guard lock(m_outbox_m);
    for (outbox* o = m_outboxes.load(std::memory_order_relaxed); o != nullptr; o = o->next) {
      // acquire: pairs with the ended thread's release (its writes to the slots).
      if (o->abandoned.load(std::memory_order_relaxed) && o->abandoned.exchange(false, std::memory_order_acquire)) {
        ob = o;
        break;
      }
    }
    if (ob == nullptr) {
      auto fresh = std::make_unique<outbox>();
      fresh->slots = std::make_unique<outbox::slot[]>(static_cast<std::size_t>(m_size));
      fresh->open.reserve(static_cast<std::size_t>(std::min(m_size, 64)));
      fresh->next = m_outboxes.load(std::memory_order_relaxed);
      ob = fresh.release();
      // release: pairs with the walkers' acquire load of the head (they see
      // the outbox whole).
      m_outboxes.store(ob, std::memory_order_release);
    }
  }
  if (t_outboxes.all.size() >= 16) {
    // Entries of bridges gone (a thread that opens session after session).
    live_bridges& lb = live();
    std::lock_guard lock(lb.m);
    std::erase_if(t_outboxes.all, [&](const thread_outboxes::entry& e) { return lb.ids.count(e.bridge) == 0; });
  }
  t_outboxes.all.push_back({m_id, ob});
  t_last_outbox = {m_id, ob};
  return *ob;
}

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

// Under ob.lock: dest's slot gets a buffer for its first item; `stamp`:
// the time it opened is read (not for a buffer the same post seals: a
// clock reading is a sizeable part of a post).
void bridge::open_slot(outbox& ob, int dest, std::size_t item, bool stamp) {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  ob.open.push_back(dest);  // may throw: nothing else changed yet
  try {
    s.buf = take_buffer(std::max(m_slot_bytes, sizeof(buffer_header) + item), &s.capacity);
  } catch (...) {
    ob.open.pop_back();
    throw;
  }
  s.used = sizeof(buffer_header);
  if (stamp) s.opened = clock::now();
  s.open_at = static_cast<int>(ob.open.size() - 1);
  ob.has_open.store(true, std::memory_order_relaxed);  // relaxed: a hint (see outbox)
}

void bridge::seal_slot(outbox& ob, int dest, std::uint64_t peer_stats::*reason, std::unique_ptr<queued> node,
                       std::unique_ptr<queued> then) noexcept {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  node->out = outgoing{std::move(s.buf), s.used, false, s.capacity};
  outgoing& o = node->out;
  const std::uint32_t items = s.items;
  // The CRCs before the link's mutex: they cover payloads only. None for
  // this rank's own buffers, which are not checked (run_self).
  const bool with_crc = m_cfg.crc && dest != m_rank;
  const std::uint32_t crc = with_crc ? crc32c(o.bytes.get() + sizeof(buffer_header), o.size - sizeof(buffer_header))
                                     : 0;
  const std::uint32_t then_crc =
      then != nullptr && with_crc
          ? crc32c(then->out.bytes.get() + sizeof(buffer_header), then->out.size - sizeof(buffer_header))
          : 0;
  s.used = 0;
  s.capacity = 0;
  s.items = 0;
  const auto at = static_cast<std::size_t>(s.open_at);
  const int moved = ob.open.back();
  ob.open[at] = moved;
  ob.slots[static_cast<std::size_t>(moved)].open_at = static_cast<int>(at);
  ob.open.pop_back();
  s.open_at = -1;
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

// A buffer that is not an outbox's: no items (a heartbeat), or one item
// without payload (the goodbye). It takes the link's next sequence number.
void bridge::queue_bare(int dest, const handler* item) {
  const std::size_t size = sizeof(buffer_header) + (item != nullptr ? sizeof(item_header) : 0);
  auto q = std::make_unique<queued>();
  q->out = outgoing{std::unique_ptr<std::byte[]>(new std::byte[size]), size, false};
  std::byte* p = q->out.bytes.get();
  if (item != nullptr) write_item(p + sizeof(buffer_header), *item, nullptr, 0, nullptr, 0);
  const std::uint32_t crc = m_cfg.crc ? crc32c(p + sizeof(buffer_header), size - sizeof(buffer_header)) : 0;
  lane& l = *m_lanes[static_cast<std::size_t>(dest)];
  std::lock_guard lock(l.m);
  write_header(p, size, item != nullptr ? 1 : 0, static_cast<std::uint32_t>(m_rank), stamp_epoch(),
               l.next_sequence++, m_cfg.crc, crc, false);
  m_pending_bytes.fetch_add(size, std::memory_order_relaxed);
  l.push(std::move(q));
  l.has_sealed.store(true, std::memory_order_relaxed);  // relaxed: a hint (see lane)
}

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
  lane& l = *m_lanes[static_cast<std::size_t>(dest)];
  if (l.departed.load(std::memory_order_acquire)) {
    throw remote_error("strata::mpi: rank " + std::to_string(dest) + " has closed its session (it said goodbye)");
  }
  // Local items (bridge.hpp): an inline call goes through this thread's
  // buffer for its own rank, anything else only behind earlier items there;
  // inside a pass, everything runs at once.
  const bool self = dest == m_rank;
  outbox* mine = nullptr;
  bool inline_self = false;
  if (self) {
    if (t_in_pass != this) {
      mine = &my_outbox();
      inline_self = inline_call(h, hn, body, n);
    }
    if (mine == nullptr || (!inline_self && !self_waiting(*mine))) {
      post_local(h, head, hn, body, bn);
      return;
    }
  }
  // Flow control: wait (sending, or making progress as the owner) while too
  // many sealed bytes wait to be sent.
  if (m_pending_bytes.load(std::memory_order_relaxed) > m_cfg.max_pending_bytes) {
    m_producer_waits.fetch_add(1, std::memory_order_relaxed);
    const bool owner = owner_here();  // progress=caller: the owner drains while it waits
    // An inline handler posting from inside a pass cannot wait for that
    // pass to drain: it goes over the cap (by what one buffer dispatches);
    // nor can a post inside serialized(), which holds the owner back.
    while (!in_pass_here() && t_serialized != this &&
           m_pending_bytes.load(std::memory_order_relaxed) > m_cfg.max_pending_bytes && !m_stop.load()) {
      if (owner) {
        pass();
      } else {
        kick_sends();
        std::this_thread::yield();
      }
    }
  }
  outbox& ob = mine != nullptr ? *mine : my_outbox();
  const std::size_t item = sizeof(item_header) + n;
  const bool large = sizeof(buffer_header) + item > m_cfg.buffer_bytes;
  // Everything that allocates comes before the item is counted or written:
  // a post that throws (bad_alloc) leaves no trace (a counted item that is
  // never sent would hold wait_quiescent forever).
  std::unique_ptr<queued> big;
  if (large) {
    big = std::make_unique<queued>();
    big->out.size = sizeof(buffer_header) + item;
    big->out.large = true;
    big->out.bytes = take_buffer(big->out.size, &big->out.capacity);
    write_item(big->out.bytes.get() + sizeof(buffer_header), h, head, hn, body, bn);
  }
  bool queued_one = false, opened = false;
  {
    ob.lock.lock();
    std::lock_guard lock(ob.lock, std::adopt_lock);
    outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
    // In the open buffer: the item, or (large path) its notice.
    const std::size_t here = large ? sizeof(item_header) : item;
    if (s.items != 0 && s.used + here > s.capacity) {
      seal_slot(ob, dest, &peer_stats::flush_full, std::make_unique<queued>());
      queued_one = true;
    }
    // The nodes this post will queue, before anything is written.
    // A reply is awaited: it goes at once when the link is idle, in either
    // mode (an actor's answer from a worker waited for the owner to see the
    // worker go idle: 10-30 µs of every remote ask under progress=thread).
    // So does the first post of a thread after it waited in get(): usually
    // its next request, which an open buffer would make wait for the owner
    // that sleeps meanwhile (bridge::help_end).
    const bool after_help = t_after_help == this;
    if (after_help) t_after_help = nullptr;
    // To this rank, only what joins earlier items to keep their order (not
    // an inline call) is sealed at once.
    const bool latency =
        self ? !large && !inline_self
             : (m_cfg.mode == send_mode::latency || h == handler::reply || after_help) && !large &&
                   l.in_flight_hint.load(std::memory_order_relaxed) == 0 &&
                   !l.has_sealed.load(std::memory_order_relaxed);
    std::unique_ptr<queued> node = large || latency ? std::make_unique<queued>() : nullptr;
    if (s.items == 0 && !(self && large)) {
      open_slot(ob, dest, here, !latency && !large);
      opened = true;
    }
    // Nothing below allocates. Counted before the item can be sealed, sent
    // or processed anywhere (quiescence.hpp); only this thread writes these.
    ob.posts.store(ob.posts.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.items_sent.store(s.items_sent.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.bytes_sent.store(s.bytes_sent.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    if (self && large) {
      // No notice: the owner runs this rank's buffers in the order they
      // were queued, the open one (if any) first.
      if (s.items != 0) {
        seal_slot(ob, dest, &peer_stats::flush_full, std::move(node), std::move(big));
      } else {
        queue_alone(ob, std::move(big));
      }
      queued_one = true;
    } else if (large) {
      // The notice as this thread's next item to dest, the item alone in a
      // buffer queued right after the notice's.
      s.used += write_item(s.buf.get() + s.used, handler::large_notice, nullptr, 0, nullptr, 0);
      s.items++;
      seal_slot(ob, dest, &peer_stats::flush_full, std::move(node), std::move(big));
      queued_one = true;
    } else {
      s.used += write_item(s.buf.get() + s.used, h, head, hn, body, bn);
      s.items++;
      // The line a few items ahead, taken for writing now: the next post's
      // lock exchange waits for this post's stores to leave the store
      // buffer, and a store to a line that the last send's copy left shared
      // would hold them there for a cross-core miss, every few items of a
      // reused buffer (prefetch_for_write).
      if (s.used + k_write_ahead < s.capacity) prefetch_for_write(s.buf.get() + s.used + k_write_ahead);
      if (latency) {
        seal_slot(ob, dest, &peer_stats::flush_latency, std::move(node));  // the link is idle: this item goes now
        queued_one = true;
      }
    }
    if (ob.open.empty()) ob.has_open.store(false, std::memory_order_relaxed);  // relaxed: a hint (see outbox)
  }
  if (t_in_pass == this) {
    m_owner_posted = true;  // the owner itself, in an inline handler: sent at the end of this pass
    return;
  }
  if (queued_one && t_serialized != this) {
    kick_sends();
  } else if (queued_one) {
    nudge_owner();
  } else if (opened) {
    nudge_open();
  }
}

// A producer's buffer was queued: send it from this thread when no one is
// making MPI calls and this thread may make them; else the owner will.
// The owner itself (the comm worker posting from a task, the session's
// thread under progress=caller) makes a whole pass instead, once per
// buffer: what the other ranks send meanwhile is received and its inline
// handlers run, and heartbeats go out, while a long loop of posts keeps
// the owner from its passes between tasks (YGM's async makes progress the
// same way). Never inside a pass (post returns before this there).
void bridge::kick_sends() {
  if (m_mode != progress_mode::caller || owner_here()) {
    std::unique_lock lock(m_mpi, std::try_to_lock);
    if (lock.owns_lock()) {
      if (m_mode != progress_mode::thread && owner_here()) {
        pass_locked(false);
      } else {
        test_sends();
        start_sends();
        // This rank's own buffers run in the owner's passes (Local items).
        if (m_lanes[static_cast<std::size_t>(m_rank)]->has_sealed.load(std::memory_order_relaxed)) {
          lock.unlock();
          nudge_owner();
        }
      }
      return;
    }
  }
  nudge_owner();  // the queued buffer's hint is stored
}

void bridge::flush_all() {
  const bool any = seal_due(true, true) != 0;
  if (any && !in_pass_here() && t_serialized != this) kick_sends();
}

// Seals the outboxes' open buffers that are due: all of them when `force`
// (flush, quiescence), else, at most every look_every per outbox, those
// whose producer went idle, those older than the delay, and in latency mode
// those of idle links.
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
    if (!ob.lock.try_lock()) return 0;  // its producer is appending: not idle, and the next look comes soon
    ob.next_look = now + std::min(delay / 4, std::chrono::microseconds(10));
  }
  std::lock_guard lock(ob.lock, std::adopt_lock);
  const std::uint64_t posts = ob.posts.load(std::memory_order_relaxed);
  const bool idle = posts == ob.seen_posts;
  ob.seen_posts = posts;
  std::size_t n = 0;
  for (std::size_t i = 0; i < ob.open.size();) {
    const int d = ob.open[i];
    const outbox::slot& s = ob.slots[static_cast<std::size_t>(d)];
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
    std::unique_ptr<queued> node;
    try {
      node = std::make_unique<queued>();
    } catch (const std::bad_alloc&) {
      break;  // out of memory: the next look (or wave) tries again
    }
    seal_slot(ob, d, reason, std::move(node));  // takes ob.open[i] out (the last one moves there)
    ++n;
  }
  ob.has_open.store(!ob.open.empty(), std::memory_order_relaxed);  // relaxed: a hint (see outbox)
  return n;
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

// Under the MPI lock.
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
          break;  // a producer holds it to queue a buffer; the next pass takes both
        }
        std::unique_ptr<queued> q = l.pop();
        if (q == nullptr) break;
        o = std::move(q->out);
        if (l.head == nullptr) l.has_sealed.store(false, std::memory_order_relaxed);  // relaxed: a hint
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
      const int rc = MPI_Isend(slot->out.bytes.get(), static_cast<int>(slot->out.size), MPI_BYTE, d,
                               slot->out.large ? k_tag_large : k_tag_data, m_data, &slot->req);
      if (rc != MPI_SUCCESS) {
        std::fprintf(stderr, "strata::mpi: rank %d: MPI_Isend to rank %d failed: %s\n", m_rank, d,
                     mpi_error(rc).c_str());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 70);
      }
      if (trace_ring* r = trace_here(m_rt.core(), "mpi progress")) {  // STRATA_TRACE
        buffer_header h{};
        if (slot->out.size >= sizeof h) std::memcpy(&h, slot->out.bytes.get(), sizeof h);
        r->instant(trace_kind::mpi_send, static_cast<std::uint32_t>(d), 0, h.items, slot->out.size);
      }
      l.in_flight++;
      l.in_flight_hint.store(l.in_flight, std::memory_order_relaxed);  // relaxed: a hint (see lane)
      l.last_sent = m_now;  // the last pass's start: a heartbeat goes at most a pass interval early
      ++n;
    }
  }
  return n;
}

// Under the MPI lock.
std::size_t bridge::test_sends() {
  std::size_t n = 0;
  for (auto& s : m_sends) {
    if (s.dest < 0) continue;
    int flag = 0;
    MPI_Test(&s.req, &flag, MPI_STATUS_IGNORE);
    if (flag == 0) continue;
    m_pending_bytes.fetch_sub(s.out.size, std::memory_order_relaxed);
    lane& l = *m_lanes[static_cast<std::size_t>(s.dest)];
    l.in_flight--;
    l.in_flight_hint.store(l.in_flight, std::memory_order_relaxed);  // relaxed: a hint (see lane)
    s.dest = -1;
    s.req = MPI_REQUEST_NULL;
    recycle(s.out);
    s.out = outgoing{};
    ++n;
  }
  return n;
}

}  // namespace strata::mpi::detail
