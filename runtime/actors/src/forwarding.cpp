// Path compression of forwarding chains, without reordering mail.
//
// Why: senders hold an actor's home address (where it was spawned; self()
// gives it too). A move leaves a forwarding slot behind, so after k moves
// a message to the home would take k forwards, and the k slots left behind
// would never be reused: the soak test saw its actor phase grow from
// 1.5 ms to 37 ms per round over 1200 migrations, and RSS creep with it.
//
// The invariant that makes it safe: the slot the home forwards to (its
// `forward`) is reached only through the home. Every forwarding slot has
// exactly one predecessor (the slot whose move created it), and the
// protocol below only ever splices out the home's successor, so the home
// stays that slot's one predecessor.
//
// The protocol, one round, three tasks through FIFO inboxes:
//   1. refresh (to the home's worker, from the worker that moved the actor
//      off a non-home slot): the home sets `refreshing`, from now on holds
//      the mail that arrives for it (in its own mail list, which a
//      forwarding slot does not otherwise use), and sends a release to
//      its successor F's worker.
//   2. release (on F's worker): every message the home forwarded to F was
//      pushed into this inbox before the release, so by now F has passed
//      each one on. If F forwards too, it is spliced out: its slot becomes
//      empty under the next generation and goes to its worker's move_free
//      list (a later migration to this worker reuses it); the reply names
//      F's successor. If F is live (or gone), the reply names no one.
//   3. released (on the home's worker): the home adopts the successor, if
//      any, and forwards the held mail to its target in order. Anything F
//      passed on was pushed to that target before the reply was sent, so
//      the held mail lands behind it: FIFO per sender holds.
// A round that spliced a hop starts another, until the release finds a
// slot that does not forward: k moves cost the home k+1 rounds, and a
// refresh that arrives during a round sets refresh_again for one more, so
// no move goes unseen. A straggler addressed to a released slot cannot
// exist (the home was its only sender); a migrate_actor request that
// follows a stale chain finds the new generation and answers false.
#include <strata/actors/actor.hpp>
#include <strata/runtime/task_group.hpp>

#include "actor_worker.hpp"

namespace strata::detail {
namespace {

void start_round(actor_worker& aw, actor_slot& h, std::uint64_t home) noexcept;

// Step 3, on the home's worker.
void released(actor_worker& aw, std::uint64_t home, std::uint64_t next) noexcept {
  const actor_address a = actor_address::from_bits(home);
  actor_slot* h = aw.table.find(a.slot());
  if (h == nullptr || h->generation != a.generation() || h->state != slot_state::forwarding) return;
  if (next != 0) h->forward = next;
  const unsigned to = actor_address::from_bits(h->forward).worker();
  for (task* m = h->mail_head; m != nullptr;) {
    task* after = m->next.load(std::memory_order_relaxed);  // relaxed: owner-private list
    aw.counters.forwards.add();
    m->tag = h->forward;
    forward_to(aw.sys.core, to, m);
    m = after;
  }
  h->mail_head = h->mail_tail = nullptr;
  h->refreshing = false;
  if (next != 0 || h->refresh_again) start_round(aw, *h, home);
}

// Step 2, on the worker of the home's successor `hop`. `reply`: a frame of
// the home's worker, its callable not yet built (start_round took it).
void release(actor_worker& aw, std::uint64_t hop, std::uint64_t home, task* reply) noexcept {
  const actor_address a = actor_address::from_bits(hop);
  actor_slot* f = aw.table.find(a.slot());
  std::uint64_t next = 0;
  if (f != nullptr && f->generation == a.generation() && f->state == slot_state::forwarding) {
    next = f->forward;
    f->state = slot_state::empty;
    f->forward = 0;
    f->generation = next_generation(f->generation);
    try {
      aw.release_move_slot(f->index, f->generation);
    } catch (...) {
      // out of memory for the list: the slot stays empty, unused
    }
  }
  actor_system* sys = &aw.sys;
  auto fn = [sys, home, next] { released(sys->at(current_worker()->index), home, next); };
  static_assert(!k_boxed<decltype(fn)>, "built in the frame: no allocation here");
  emplace_callable(reply, fn);
  submit_to_worker(sys->core, actor_address::from_bits(home).worker(), reply);
}

// Step 1's second half: hold the mail, ask the successor. Both frames of
// the round are taken here, before anything changes, so that no step after
// this one needs memory: without them there is no round (the chain stays
// one hop longer until the next move asks again), never a home left
// holding mail for a reply that cannot be sent.
void start_round(actor_worker& aw, actor_slot& h, std::uint64_t home) noexcept {
  task* ask = nullptr;
  task* reply = nullptr;
  try {
    ask = detached_frame(aw);
    reply = detached_frame(aw);
  } catch (...) {
    if (ask != nullptr) free_frame(aw.w, ask);
    h.refresh_again = false;
    return;
  }
  h.refreshing = true;
  h.refresh_again = false;
  const std::uint64_t hop = h.forward;
  actor_system* sys = &aw.sys;
  auto fn = [sys, hop, home, reply] { release(sys->at(current_worker()->index), hop, home, reply); };
  static_assert(!k_boxed<decltype(fn)>, "built in the frame: no allocation here");
  emplace_callable(ask, fn);
  submit_to_worker(sys->core, actor_address::from_bits(hop).worker(), ask);
}

}  // namespace

// Step 1, on the home's worker.
void refresh_home(actor_worker& aw, std::uint64_t home) noexcept {
  const actor_address a = actor_address::from_bits(home);
  actor_slot* h = aw.table.find(a.slot());
  if (h == nullptr || h->generation != a.generation() || h->state != slot_state::forwarding) return;
  if (h->refreshing) {
    h->refresh_again = true;
    return;
  }
  start_round(aw, *h, home);
}

}  // namespace strata::detail
