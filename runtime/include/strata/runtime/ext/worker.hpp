// worker: one pinned thread's state, split into an owner-private part and a
// part other threads touch, each on its own 128-byte lines.
//
// Owner-private: the deque's owner handle, the frame pool, the fairness
// tick, the group of the task it is running, its counters (written by the
// owner only, read racily by stats()).
// Thief-visible: the stealer handle of its deque (in runtime_core), its
// inbox, its parking word.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <strata/config.hpp>
#include <strata/runtime/ext/deque.hpp>
#include <strata/runtime/ext/frame_pool.hpp>
#include <strata/runtime/ext/inbox.hpp>
#include <strata/runtime/ext/task.hpp>

namespace strata {
class actor_base;
class actor_context;
}  // namespace strata

namespace strata::detail {

struct runtime_core;
class actor_table;  // src/actor_table.hpp

// A counter with one writer (its worker) and racy readers: a plain add with a
// release store (free on x86): wait_idle's acquire reads of `executed` and
// `spawned` then see every spawn that happened before a counted execution.
struct counter {
  std::atomic<std::uint64_t> v{0};
  void add(std::uint64_t n = 1) noexcept { v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_release); }
  void max(std::uint64_t n) noexcept {
    if (n > v.load(std::memory_order_relaxed)) v.store(n, std::memory_order_relaxed);
  }
  void set(std::uint64_t n) noexcept { v.store(n, std::memory_order_release); }  // release: as add
  std::uint64_t get() const noexcept { return v.load(std::memory_order_acquire); }  // acquire: pairs with add
};

inline constexpr std::size_t k_max_tiers = 16;

struct worker_counters {
  counter executed, spawned, stolen, steal_attempts, steal_failures, injector, inbox, publishes, parks, wakeups,
      high_water, boxed, detached_exceptions, busy_ns, idle_ns;
  // Lock-mode requests started on this worker / finished (ran and released)
  // here: wait_idle compares the sums.
  counter lock_submitted, lock_released;
  // parallel_invoke join frames (see worker::join_poll_at): those run by
  // their owner inline, those run through run_task (stolen, or popped by a
  // helping wait), and those their owner found taken (counted by the owner
  // after the join). Outside wait_idle's sums: a join frame lives only while
  // the task that pushed it runs.
  counter joins_inline, joins_taken, joins_away;
  // Actors: messages put into mailboxes (sent on this worker / arrived from
  // another), dead letters, actor failures, the deepest mailbox seen,
  // migrations proposed by the monitor and done (moved off this worker).
  counter actors_live, messages_local, messages_remote, dead_letters, actor_failures, mailbox_high_water, migrations_proposed,
      migrations_done;
  counter steals_by_tier[k_max_tiers];
};

using task_inbox = inbox<task, &task::next>;

// Idle accounting of one package (socket): spinning workers in the low 32
// bits, parked workers in the high 32 bits. Read-modify-written (seq_cst) by
// the package's workers and by wakers; read by producers after a seq_cst
// fence. Per package, so that every socket keeps its own searcher and a
// producer wakes a sleeper near its work first (DESIGN: spinners capped per
// socket).
struct alignas(k_destructive_size) package_idle {
  std::atomic<std::uint64_t> word{0};
  unsigned workers = 0;  // workers placed in the package (set before start)
};

// Tasks between two polls of the inbox and the injector while the deque is busy.
inline constexpr std::int32_t k_injector_period = 61;  // prime: no resonance with loop shapes

struct worker {
  // The worker's structures (this object, its deque buffers, its frame
  // slabs) live in memory of `where`: its NUMA node when it is pinned.
  explicit worker(memory_placement where) : deque(1024, where), pool(where), memory(where) {}
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  // --- owner-private ---
  alignas(k_destructive_size) runtime_core* rt = nullptr;
  unsigned index = 0;
  worker_deque<task*> deque;
  frame_pool pool;
  task_group* running_group = nullptr;  // group of the task running now (nested waits)
  // Fairness countdown: at zero (every k_injector_period tasks) the inbox
  // and the injector are polled; a decrement and a branch per task.
  std::int32_t ticks_left = k_injector_period;  // signed: stays due (<= 0) until a poll resets it
  // parallel_invoke's inline joins have a poll schedule of their own: the
  // join that brings counters.joins_inline to join_poll_at polls, and every
  // poll sets it k_injector_period joins ahead. So an inline join writes one
  // word, its count, instead of three (a spawned and an executed count and
  // the tick): on the fork-join path each of those is a store that the next
  // join loads again, and fib(30) on one worker ran 13.3 -> 9.2-9.7 ms (best of
  // 41, the same process, interleaved) with one instead of three.
  std::uint64_t join_poll_at = k_injector_period;
  std::uint64_t rng = 0;                // victim choice
  package_idle* idle = nullptr;         // the idle word of this worker's package
  unsigned package = 0;
  memory_placement memory;
  worker_counters counters;
  // Actors pinned here (created on first use) and the FIFO of actors whose
  // turn is due (their turn frames, linked through task::next).
  actor_table* actors = nullptr;
  task* ready_head = nullptr;
  task* ready_tail = nullptr;
  actor_base* turn_actor = nullptr;  // actor of the turn running now (nested turns save it)
  actor_context* turn_ctx = nullptr;
  bool mail_backlog = false;  // the last inbox pop stopped at its message limit

  // --- touched by other threads ---
  alignas(k_destructive_size) task_inbox inbox;
  // Parking word (futex): 1 while this worker sleeps or is about to; written
  // by the worker (set) and by wakers (CAS 1 -> 0); seq_cst (Dekker with
  // producers: see notifier in runtime_core).
  alignas(k_destructive_size) std::atomic<std::uint32_t> sleeping{0};
  // Actor slots handed out by other threads (spawns, migrations to here):
  // fetch_add by any thread; the owner installs them when the install task
  // arrives. The owner's own spawns reuse its free slots first.
  std::atomic<std::uint32_t> fresh_slots{1};
};

// Allocates a worker in memory of `where`; worker_ptr releases it there.
struct worker_deleter {
  void operator()(worker* w) const noexcept;
};
using worker_ptr = std::unique_ptr<worker, worker_deleter>;
worker_ptr make_worker(memory_placement where);

// The worker running on this thread, or nullptr. initial-exec: a plain
// %fs-relative load even from a shared library (no __tls_get_addr call on
// every spawn); strata is loaded with the program, never dlopen()ed late.
inline thread_local worker* t_current_worker __attribute__((tls_model("initial-exec"))) = nullptr;
inline worker* current_worker() noexcept { return t_current_worker; }

// Slow paths of the spawn fast path (worker_loop.cpp).
void publish_and_wake(worker& w) noexcept;

// push_local, the fast path of every spawn, is in runtime_core.hpp.

// What stats() reports: tasks run and pushed on w, parallel_invoke's join
// frames included (wait_idle's sums leave those out).
inline std::uint64_t tasks_executed(const worker& w) noexcept {
  return w.counters.executed.get() + w.counters.joins_taken.get() + w.counters.joins_inline.get();
}
inline std::uint64_t tasks_spawned(const worker& w) noexcept {
  return w.counters.spawned.get() + w.counters.joins_away.get() + w.counters.joins_inline.get();
}

}  // namespace strata::detail
