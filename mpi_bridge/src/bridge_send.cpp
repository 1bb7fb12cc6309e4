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

// The common post, in a small frame: an item that fits, to a rank that is
// there, in throughput mode, not a reply, from a thread whose outbox is at
// hand, with room under the pending cap (inline calls only, to this rank,
// from outside a pass): a fast append (Fast appends in bridge.hpp).
// Everything else, and every error, takes post_slow.
void bridge::post(int dest, handler h, const std::byte* head, std::size_t hn, const std::byte* body,
                  std::size_t bn) {
  const std::size_t item = sizeof(item_header) + hn + bn;
  if (m_fast_post && static_cast<unsigned>(dest) < static_cast<unsigned>(m_size) &&
      sizeof(buffer_header) + item <= m_cfg.buffer_bytes && m_cfg.mode == send_mode::throughput &&
      h != handler::reply && t_last_outbox.bridge == m_id && t_after_help != this &&
      !m_departed[static_cast<std::size_t>(dest)].flag.load(std::memory_order_acquire) &&
      m_pending_bytes.load(std::memory_order_relaxed) <= m_cfg.max_pending_bytes &&
      (dest != m_rank || (t_in_pass != this && inline_call(h, hn, body, hn + bn))) &&
      append_fast(*t_last_outbox.ob, dest, item, h, head, hn, body, bn)) {
    if (t_in_pass == this) m_owner_posted = true;  // sealed at the end of this pass
    return;
  }
  post_slow(dest, h, head, hn, body, bn);
}

void bridge::post_slow(int dest, handler h, const std::byte* head, std::size_t hn, const std::byte* body,
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
  if (m_departed[static_cast<std::size_t>(dest)].flag.load(std::memory_order_acquire)) {
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
  if (m_fast_post && !large && !latency && append_fast(ob, dest, item, h, head, hn, body, bn)) {
    if (t_in_pass == this) m_owner_posted = true;  // sealed at the end of this pass
    return;
  }
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
    std::size_t at = s.cursor.load(std::memory_order_relaxed) & outbox::k_used_mask;  // relaxed: own
    if (s.buf != nullptr && !s.listed.load(std::memory_order_relaxed)) {  // the owner asked for a seal
      if (at != s.taken) {
        seal_slot(ob, dest, &peer_stats::flush_timer, std::make_unique<queued>());
        queued_one = true;
        at = 0;
      } else {
        s.listed.store(true, std::memory_order_relaxed);  // copied out meanwhile: appends go on
      }
    }
    if (s.buf != nullptr && at + here > s.capacity) {
      if (at != s.taken) {
        seal_slot(ob, dest, &peer_stats::flush_full, std::make_unique<queued>());
        queued_one = true;
      } else {  // all of it was copied out: the buffer goes back
        const std::size_t capacity = s.capacity;
        outgoing back{unlist_slot(ob, dest), 0, false, capacity};
        recycle(back);
      }
    }
    // The nodes this post will queue, before anything is written.
    std::unique_ptr<queued> node = large || latency ? std::make_unique<queued>() : nullptr;
    if (s.buf == nullptr && !(self && large)) {
      open_slot(ob, dest, here, !latency && !large);
      opened = true;
    }
    // Nothing below allocates. Counted before the item can be sealed, sent
    // or processed anywhere (quiescence.hpp); only this thread writes these.
    ob.posts.store(ob.posts.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.items_sent.store(s.items_sent.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.bytes_sent.store(s.bytes_sent.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    const std::uint64_t c = s.cursor.load(std::memory_order_relaxed);  // relaxed: this thread's own writes
    if (self && large) {
      // No notice: the owner runs this rank's buffers in the order they
      // were queued, the open one (if any) first.
      if (s.buf != nullptr && (c & outbox::k_used_mask) != s.taken) {
        seal_slot(ob, dest, &peer_stats::flush_full, std::move(node), std::move(big));
      } else {
        queue_alone(ob, std::move(big));
      }
      queued_one = true;
    } else if (large) {
      // The notice as this thread's next item to dest, the item alone in a
      // buffer queued right after the notice's.
      const std::size_t w = write_item(s.buf.get() + (c & outbox::k_used_mask), handler::large_notice, nullptr, 0,
                                       nullptr, 0);
      s.cursor.store(c + w + outbox::k_one_item, std::memory_order_relaxed);  // relaxed: under lock, sealed now
      seal_slot(ob, dest, &peer_stats::flush_full, std::move(node), std::move(big));
      queued_one = true;
    } else {
      const std::size_t used = (c & outbox::k_used_mask) + write_item(s.buf.get() + (c & outbox::k_used_mask), h,
                                                                       head, hn, body, bn);
      if (!latency && s.opened == clock::time_point::max()) s.opened = clock::now();  // the first not yet taken
      // release: pairs with copy_slot's acquire (the item's bytes).
      s.cursor.store(c + item + outbox::k_one_item, std::memory_order_release);
      if (used + k_write_ahead < s.capacity) prefetch_for_write(s.buf.get() + used + k_write_ahead);
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

// The producer's append to a listed slot whose buffer has room, without
// the lock (Fast appends in bridge.hpp). `busy` brackets it: a retire that
// clears `listed` sees it after its membarrier, or this load of `listed`
// sees the retire's store.
bool bridge::append_fast(outbox& ob, int dest, std::size_t item, handler h, const std::byte* head, std::size_t hn,
                         const std::byte* body, std::size_t bn) noexcept {
  outbox::slot& s = ob.slots[static_cast<std::size_t>(dest)];
  ob.busy.store(true, std::memory_order_relaxed);  // relaxed: the retire's membarrier orders it
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the store before the load
  // relaxed: a slot listed by this thread, or by a retire that found it
  // moved (then its buffer stayed as this thread left it).
  const std::uint64_t c = s.cursor.load(std::memory_order_relaxed);  // this thread's own writes
  if (!s.listed.load(std::memory_order_relaxed) || (c & outbox::k_used_mask) + item > s.capacity) {
    ob.busy.store(false, std::memory_order_relaxed);  // relaxed: nothing written
    return false;
  }
  // Counted before the item can be copied out, sent or processed anywhere
  // (quiescence.hpp); only this thread writes these.
  ob.posts.store(ob.posts.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s.items_sent.store(s.items_sent.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s.bytes_sent.store(s.bytes_sent.load(std::memory_order_relaxed) + hn + bn, std::memory_order_relaxed);
  std::byte* at = s.buf.get() + (c & outbox::k_used_mask);
  write_item(at, h, head, hn, body, bn);
  // release: pairs with copy_slot's acquire (the item's bytes, the counts).
  s.cursor.store(c + item + outbox::k_one_item, std::memory_order_release);
  // release: pairs with the retire's acquire of `busy` (the cursor).
  ob.busy.store(false, std::memory_order_release);
  // The line a few items ahead, taken for writing now: a store to a line
  // that the last send's copy left shared would wait for a cross-core miss,
  // every few items of a reused buffer (prefetch_for_write).
  if ((c & outbox::k_used_mask) + item + k_write_ahead < s.capacity) prefetch_for_write(at + item + k_write_ahead);
  return true;
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
