// actor_worker: the actors of one worker, as a work source of that worker.
//
// Owner-private (touched by the worker's thread only): the actor table, the
// FIFO of slots whose turn is due (linked through their embedded turn
// frames), the counters (written by the owner, read racily by stats()).
// Thief-visible, on its own line: fresh_slots, the slot numbers handed out
// to spawners on other threads, and move_free, released forwarding slots
// that migrations from other workers take (under move_mutex: a migration
// is rare next to a message, so a lock is cheaper to reason about).
//
// As a work source: ready() is "a turn is due"; poll(budget) runs up to
// `budget` due turns, one after the other (an actor conversation on one
// worker: each message's reader is due right after the writer's turn), each
// of at most actor_system::budget messages; accept() takes a message frame
// that arrived through the worker's inbox into its actor's mailbox.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include <strata/actors/ext/actor_system.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/ext/work_source.hpp>
#include <strata/runtime/ext/worker.hpp>

#include "actor_table.hpp"

namespace strata::detail {

struct actor_counters {
  // Messages put into mailboxes (sent on this worker / arrived from
  // another), dead letters, actor failures, the deepest mailbox seen,
  // migrations proposed by the monitor and done (moved off this worker),
  // messages forwarded after a migrated actor (one per hop).
  counter actors_live, messages_local, messages_remote, dead_letters, actor_failures, mailbox_high_water,
      migrations_proposed, migrations_done, forwards;
};

class actor_worker final : public work_source {
 public:
  actor_worker(actor_system& system, worker& owner) : sys(system), w(owner), table(owner.index, fresh_slots) {}

  bool ready(worker&) noexcept override { return ready_head != nullptr; }
  std::size_t poll(worker& w, std::size_t budget) noexcept override;
  void accept(worker& w, task* t) noexcept override;

  // The next due turn's slot, or nullptr.
  actor_slot* pop_ready() noexcept {
    task* t = ready_head;
    if (t == nullptr) return nullptr;
    ready_head = t->next.load(std::memory_order_relaxed);  // relaxed: owner-private list
    if (ready_head == nullptr) ready_tail = nullptr;
    return &slot_of_turn(t);
  }
  // Queues s's turn unless it is queued or running.
  void queue_turn(actor_slot& s) noexcept {
    if (s.scheduled) return;
    s.scheduled = true;
    task* t = &s.turn;
    t->next.store(nullptr, std::memory_order_relaxed);  // relaxed: owner-private list
    if (ready_tail == nullptr) {
      ready_head = t;
    } else {
      ready_tail->next.store(t, std::memory_order_relaxed);  // relaxed: owner-private list
    }
    ready_tail = t;
  }

  actor_system& sys;
  worker& w;
  // --- owner-private ---
  actor_table table;
  task* ready_head = nullptr;
  task* ready_tail = nullptr;
  actor_counters counters;
  // --- touched by other threads ---
  // Slot numbers handed out by other threads (spawns, migrations to here):
  // fetch_add by any thread; the owner installs them when the install task
  // arrives. The owner's own spawns reuse its free slots first.
  alignas(k_destructive_size) std::atomic<std::uint32_t> fresh_slots{1};

  // A slot for an actor migrating here, taken by the moving worker:
  // {index, generation}. A released one first, else a fresh one (index
  // k_max_slots or more: none left).
  std::pair<std::uint32_t, std::uint16_t> take_move_slot() {
    {
      std::lock_guard lock(move_mutex);
      if (!move_free.empty()) {
        const auto s = move_free.back();
        move_free.pop_back();
        return s;
      }
    }
    // relaxed: uniqueness only; the adopt task orders the rest.
    return {fresh_slots.fetch_add(1, std::memory_order_relaxed), 1};
  }
  // By the owner: slot `index`, now empty under `gen`, may host a migration.
  void release_move_slot(std::uint32_t index, std::uint16_t gen) {
    std::lock_guard lock(move_mutex);
    move_free.emplace_back(index, gen);
  }

 private:
  std::mutex move_mutex;
  std::vector<std::pair<std::uint32_t, std::uint16_t>> move_free;
};

// A detached task frame from aw's worker's pool.
inline task* detached_frame(actor_worker& aw) {
  task* t = aw.w.pool.allocate();
  t->group = nullptr;
  t->how = completion::detached;
  return t;
}

// Runs f on worker `to` of aw's runtime, behind what its inbox holds (from
// aw's worker: never refused).
template <class F>
void post_to(actor_worker& aw, unsigned to, F&& f) {
  task* t = detached_frame(aw);
  emplace_callable(t, std::forward<F>(f));
  submit_to_worker(aw.sys.core, to, t);
}

// Delivery and turns (turns.cpp).
//
// Puts message t, addressed to this worker, into its mailbox, or forwards
// it (the actor moved), or makes it a dead letter. from_inbox: it came
// through the inbox (so any install task before it has run).
void deliver(actor_worker& aw, task* t, bool from_inbox) noexcept;
// Installs an actor in slot `index` of aw's table; home: its identity (0:
// this slot, a spawn).
void install(actor_worker& aw, std::uint32_t index, std::uint16_t gen, actor_base* a,
             std::unique_ptr<actor_factory> f, affinity aff, std::uint64_t home = 0);
// Queues s's turn: its mailbox has mail.
inline void schedule(actor_worker& aw, actor_slot& s) noexcept { aw.queue_turn(s); }
// Destroys s's actor, if any.
void destroy_actor(actor_slot& s) noexcept;
// Pushes message t into worker `index`'s inbox: it was counted already.
void forward_to(runtime_core& rt, unsigned index, task* t) noexcept;

// Migration (migration.cpp).
//
// Moves the actor at `a` (on this worker, or further along its forwarding
// chain) to worker `to`, between two of its messages. reply (may be null)
// gets true when it moved, false when it could not (sticky, gone, running
// a turn now, already there).
void migrate_actor(actor_worker& aw, actor_address a, unsigned to, const std::shared_ptr<future_state<bool>>& reply);
// Load monitor's proposal, run on a busy worker: move its most active
// elastic actor to worker `to` if it has at least two active ones.
void rebalance(actor_worker& aw, unsigned to);
void start_monitor(actor_system& sys, unsigned period_ms);

// Path compression (forwarding.cpp). Run on the worker of `home`: a move
// beyond the home slot happened; shorten the chain from home to the actor
// to one hop, without reordering mail.
// noexcept: a round half done would hold mail for ever; out of memory for a
// task frame ends the process instead.
void refresh_home(actor_worker& aw, std::uint64_t home) noexcept;
void stop_monitor(actor_system& sys) noexcept;

}  // namespace strata::detail
