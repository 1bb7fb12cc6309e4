// worker: one worker's state, split into an owner-private part and a part
// other threads touch, each on its own 128-byte lines.
//
// Owner-private (written by the thread running the worker's loop only): the
// deque's owner handle, the frame pool, the fairness countdown, the group of
// the task it is running, its work sources, its counters (read racily by
// stats() and wait_idle).
// Thief-visible: the stealer handle of its deque (in runtime_core), its
// inbox, its parking word, its hosting flag.
//
// Counting, for wait_idle (quiescence.cpp): every frame that can run or be
// accepted by a work source is counted in `spawned` of the worker that
// created it (or in runtime_core::external_created when a thread outside
// created it) before anyone can run it, and in `executed` of the worker that
// finished it, after its callable was destroyed. A work source that creates
// or finishes frames itself (an actor's message) counts them here too.
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
#include <strata/runtime/ext/work_source.hpp>

namespace strata::detail {

struct runtime_core;
class trace_ring;

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
inline constexpr std::size_t k_max_sources = 8;

struct worker_counters {
  counter executed, spawned, stolen, steal_attempts, steal_failures, injector, inbox, publishes, parks, wakeups,
      high_water, boxed, detached_exceptions, busy_ns, idle_ns, from_lanes, spilled;
  counter local_spin_limit;  // worker::local_spin_rounds, for stats (set when it changes)
  // parallel_invoke join frames (see worker::join_poll_at): those run by
  // their owner inline, those run through run_task (stolen, or popped by a
  // helping wait), and those their owner found taken (counted by the owner
  // after the join). Outside wait_idle's sums: a join frame lives only while
  // the task that pushed it runs.
  counter joins_inline, joins_taken, joins_away;
  counter steals_by_tier[k_max_tiers];
};

using task_inbox = inbox<task, &task::next>;

// Idle accounting of one package (socket): spinning workers in the low 32
// bits, parked workers in the high 32 bits (parking.cpp tells the protocol).
struct alignas(k_destructive_size) package_idle {
  std::atomic<std::uint64_t> word{0};
  unsigned workers = 0;  // workers placed in the package (set before start)
};

// Tasks between two polls of the inbox, the injector and the work sources
// while the deque is busy.
inline constexpr std::int32_t k_injector_period = 61;  // prime: no resonance with loop shapes

// Bounds of an idle worker's local spin, in rounds (parking.cpp adapts it
// between them).
inline constexpr std::uint32_t k_local_spin_max = 256;
inline constexpr std::uint32_t k_local_spin_min = 16;

struct worker {
  // The worker's structures (this object, its deque buffers, its frame
  // slabs) live in memory of `where`: its NUMA node when it is pinned.
  explicit worker(memory_placement where) : deque(1024, where), pool(where), memory(where) {
    counters.local_spin_limit.set(local_spin_rounds);
  }
  worker(const worker&) = delete;
  worker& operator=(const worker&) = delete;

  // --- owner-private ---
  alignas(k_destructive_size) runtime_core* rt = nullptr;
  unsigned index = 0;
  worker_deque<task*> deque;
  frame_pool pool;
  task_group* running_group = nullptr;  // group of the task running now (nested waits)
  // Fairness countdown: at zero (every k_injector_period tasks) the inbox,
  // the injector and the work sources are polled; a decrement and a branch
  // per task.
  std::int32_t ticks_left = k_injector_period;  // signed: stays due (<= 0) until a poll resets it
  // parallel_invoke's inline joins have a poll schedule of their own: the
  // join that brings counters.joins_inline to join_poll_at polls, and every
  // poll sets it k_injector_period joins ahead. So an inline join writes one
  // word, its count, instead of a spawned and an executed count and the
  // fairness tick, each of which the next join would load again.
  std::uint64_t join_poll_at = k_injector_period;
  std::uint64_t rng = 0;                // victim choice
  package_idle* idle = nullptr;         // the idle word of this worker's package
  unsigned package = 0;
  memory_placement memory;
  // The last inbox pop stopped at its limit of routed frames with more
  // possibly queued: the worker must not park on them (producers only wake
  // a sleeping worker).
  bool inbox_backlog = false;
  unsigned lane_cursor = 0;  // the external lane to look at first (lanes.cpp)
  // How many rounds the next local spin may take (parking.cpp: adapted to
  // whether spinning has lately paid).
  std::uint32_t local_spin_rounds = k_local_spin_max;
  // policy::hybrid: a spawn that finds this many tasks on the deque goes to
  // the spill queue instead (push_local, policy.cpp); the largest value
  // under the other policies, so the spawn path's check never fires.
  std::int64_t spill_at = INT64_MAX;
  // The kernel's id of the thread running this worker (engine::owned: set by
  // the worker before the start latch, read after it; 0 under external).
  int os_tid = 0;
  // STRATA_TRACE: this worker's ring (ext/trace.hpp), written by its thread
  // only; null when the runtime does not trace (run_task's one branch).
  trace_ring* trace = nullptr;
  worker_counters counters;
  // Work sources (work_source.hpp): sources[0, num_sources) are polled.
  // Written once per source by runtime_core::add_source (under its mutex,
  // entries before the count); num_sources: release store there, acquire
  // loads here by the owner.
  work_source* sources[k_max_sources] = {};
  std::atomic<std::uint32_t> num_sources{0};
  // The source that supplies the idle wait, if any: set once by add_source,
  // read by the worker before it sleeps and by wakers (all seq_cst:
  // parking.cpp, wake_sleeper).
  std::atomic<work_source*> idle_waiter{nullptr};

  // --- touched by other threads ---
  alignas(k_destructive_size) task_inbox inbox;
  // Parking word (futex): 1 while this worker sleeps or is about to; written
  // by the worker (set) and by wakers (CAS 1 -> 0); seq_cst (parking.cpp).
  alignas(k_destructive_size) std::atomic<std::uint32_t> sleeping{0};
  // engine::external: 1 while a thread hosts this worker's loop in
  // run_worker (engine.cpp; written under runtime_core::engine_mutex, read
  // by wait_idle's hosting check). Tick passes do not set it.
  std::atomic<std::uint32_t> hosted{0};
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

// Slow paths of the spawn fast path (worker_loop.cpp, policy.cpp).
void publish_and_wake(worker& w) noexcept;
// policy::hybrid: t, spawned on w (counted by the caller), goes to the spill
// queue of w's NUMA node and a worker is woken if nobody searches.
void spill_task(worker& w, task* t) noexcept;
// After making work available to w from another thread outside w's deque
// (a work source's queue, w's inbox): a seq_cst fence, then a wake-up of w
// if it sleeps (parking.cpp).
void notify_worker(worker& w) noexcept;

// What stats() reports: tasks run and pushed on w, parallel_invoke's join
// frames included (wait_idle's sums leave those out).
inline std::uint64_t tasks_executed(const worker& w) noexcept {
  return w.counters.executed.get() + w.counters.joins_taken.get() + w.counters.joins_inline.get();
}
inline std::uint64_t tasks_spawned(const worker& w) noexcept {
  return w.counters.spawned.get() + w.counters.joins_away.get() + w.counters.joins_inline.get();
}

}  // namespace strata::detail
