// Items for the posting thread's own rank (Local items in bridge.hpp):
// which of them wait behind the thread's earlier ones, the buffers the owner
// runs in its passes, and the calls that run at once.
#include "bridge.hpp"

#include <cstring>
#include <mutex>
#include <vector>

#include "bridge_util.hpp"

namespace strata::mpi::detail {

// Whether an item for this rank is an inline function's call: post_at's or
// submit_at's (its payload: function id, request id, arguments).
bool bridge::inline_call(handler h, std::size_t hn, const std::byte* body, std::size_t n) noexcept {
  if (h != handler::task || hn != 0 || n < 16) return false;
  const remote_entry* e = cached_remote(read_u64(body));
  return e != nullptr && e->run_inline;
}

// Whether items of this thread for its own rank wait to run (Local items
// in bridge.hpp): an item that is not an inline call then joins them. Under
// the lock: the owner may have just copied out the open buffer (its count
// is then seen here).
bool bridge::self_waiting(outbox& ob) {
  ob.lock.lock();
  std::lock_guard lock(ob.lock, std::adopt_lock);
  // acquire: pairs with run_self's release (those items ran before this one).
  const outbox::slot& s = ob.slots[static_cast<std::size_t>(m_rank)];
  // relaxed: the cursor is this thread's own.
  return (s.cursor.load(std::memory_order_relaxed) & outbox::k_used_mask) != s.taken ||
         ob.self_queued.load(std::memory_order_acquire) != 0;
}

// Under ob.lock: a one-item buffer for this rank, queued alone.
void bridge::queue_alone(outbox& ob, std::unique_ptr<queued> q) noexcept {
  outgoing& o = q->out;
  q->self_from = &ob;
  ob.self_queued.fetch_add(1, std::memory_order_relaxed);  // relaxed: ordered by ob.lock, under which it is read
  lane& l = *m_lanes[static_cast<std::size_t>(m_rank)];
  lock_lane(l.m);
  std::lock_guard lock(l.m, std::adopt_lock);
  // No CRC: this rank's own buffers are not checked (run_self).
  write_header(o.bytes.get(), o.size, 1, static_cast<std::uint32_t>(m_rank), stamp_epoch(), l.next_sequence++,
               false, 0, true);
  m_pending_bytes.fetch_add(o.size, std::memory_order_relaxed);
  l.push(std::move(q));
  l.st.large_sent++;
  l.has_sealed.store(true, std::memory_order_relaxed);  // relaxed: a hint (see lane)
}

// An item for this rank that runs at once on the calling thread (Local
// items in bridge.hpp: not an inline call outside a pass, nothing of this
// thread's own waiting before it).
void bridge::post_local(handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn) {
  const std::size_t n = hn + bn;
  outbox& ob = my_outbox();
  outbox::slot& s = ob.slots[static_cast<std::size_t>(m_rank)];
  // Only this thread writes these (statistics).
  s.items_sent.store(s.items_sent.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s.bytes_sent.store(s.bytes_sent.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  // A call of an inline function (post_at or submit_at to this rank) made
  // inside a pass runs here and now, inside this post, and is counted
  // neither sent nor done (quiescence.hpp): it is part of the item the pass
  // is running (an inline handler, a reply sink), whose `done` is counted
  // after this returns, so the call is inside that item's span.
  if (h == handler::task && hn == 0 && n >= 16) {
    const remote_entry* e = cached_remote(read_u64(body));
    if (e != nullptr && e->run_inline) {
      const std::uint64_t request = read_u64(body + 8);
      if (request == 0 && e->call_posted != nullptr) {
        run_posted(m_rank, e, body + 16, n - 16);  // post_at's: the short way (dispatch_buffer)
      } else {
        invoke(m_rank, e, request, body + 16, n - 16);
      }
      ob.inline_runs.store(ob.inline_runs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      return;
    }
  }
  // Anything else is counted before it runs (quiescence.hpp).
  ob.posts.store(ob.posts.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (hn == 0) {
    dispatch_item(m_rank, h, body, n);
  } else {
    std::vector<std::byte> joined(n);
    std::memcpy(joined.data(), head, hn);
    if (bn != 0) std::memcpy(joined.data() + hn, body, bn);
    dispatch_item(m_rank, h, joined.data(), n);
  }
  count_inline_done();
}

// This rank's own sealed buffers (Local items in bridge.hpp), oldest first,
// dispatched as received ones are, minus the checks: the bridge wrote them.
// A buffer leaves the pending bytes and its outbox's self_queued once its
// items ran, or once one threw out of dispatch (it is lost, as a received
// buffer would be).
std::size_t bridge::run_self(std::size_t max) {
  lane& l = *m_lanes[static_cast<std::size_t>(m_rank)];
  std::size_t n = 0;
  while (n < max && l.has_sealed.load(std::memory_order_relaxed)) {  // relaxed: a hint, confirmed under l.m
    std::unique_ptr<queued> q;
    {
      std::lock_guard lock(l.m);
      q = l.pop();
      if (l.head == nullptr) l.has_sealed.store(false, std::memory_order_relaxed);  // relaxed: a hint
      if (q == nullptr) break;
      l.st.buffers_sent++;
    }
    struct ran {
      bridge& b;
      queued& q;
      ~ran() {
        b.m_pending_bytes.fetch_sub(q.out.size, std::memory_order_relaxed);
        b.recycle(q.out);
        // release: pairs with self_waiting's acquire (the items ran).
        if (q.self_from != nullptr) q.self_from->self_queued.fetch_sub(1, std::memory_order_release);
      }
    } after{*this, *q};
    buffer_header h;
    std::memcpy(&h, q->out.bytes.get(), sizeof h);
    dispatch_buffer(m_rank, q->out.bytes.get(), h);
    ++n;
  }
  return n;
}

}  // namespace strata::mpi::detail
