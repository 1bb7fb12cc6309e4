// runtime_core: the state every worker and submitter shares, and the spawn
// fast path (inline, so a spawn costs a few plain operations).
//
// Parking (see worker_loop.cpp for the full protocol): each package's idle
// word packs its spinning workers (low 32 bits) and parked workers (high 32
// bits). A producer of shared work wakes a parked worker only when nobody
// spins in its package (Go's rule, per socket); a worker about to park
// announces itself in its package's word and in its own `sleeping` word
// (seq_cst), re-checks every source, then sleeps on its futex or cancels.
// Producers publish work, then (seq_cst fence) read the idle words: one of
// the two sides always sees the other.
#pragma once

#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <vector>

#include <strata/config.hpp>
#include <strata/runtime/actor_address.hpp>
#include <strata/runtime/ext/sync.hpp>
#include <strata/runtime/ext/worker.hpp>
#include <strata/topology/placement.hpp>

namespace strata {
class runtime;
class task_group;
}

namespace strata::detail {

class injector;  // per-NUMA-node MPMC queue (src/injector.hpp)
struct access_dispatcher;  // lock-mode resources (src/resource_dispatch.hpp)

inline constexpr std::uint64_t k_spinner = 1;
inline constexpr std::uint64_t k_sleeper = std::uint64_t{1} << 32;

struct runtime_core {
  explicit runtime_core(placement_plan p);
  ~runtime_core();  // out of line: injector is complete only in runtime.cpp
  runtime_core(const runtime_core&) = delete;
  runtime_core& operator=(const runtime_core&) = delete;

  placement_plan plan;
  std::vector<worker_ptr> workers;                    // filled before any worker runs
  std::vector<stealer<task*>> stealers;              // one per worker, read by thieves
  std::vector<std::unique_ptr<injector>> injectors;  // one per NUMA node
  std::vector<int> node_of_cpu;                      // OS PU -> NUMA node, for external submits
  bool pinned = false;
  bool deterministic = false;

  // Per package: spinners (low half) and sleepers (high half); see package_idle.
  std::unique_ptr<package_idle[]> idle;
  std::size_t num_packages = 0;
  // Submissions in flight from outside and the shutdown flag (Dekker pair:
  // a submitter raises active_submits then reads accepting; shutdown clears
  // accepting then waits for active_submits to drain; both seq_cst).
  alignas(k_destructive_size) std::atomic<std::int64_t> active_submits{0};
  std::atomic<bool> accepting{true};
  std::atomic<bool> stopping{false};  // workers exit their loop (set after the last task)
  // Tasks created off the workers (RMW by submitters; read by wait_idle).
  alignas(k_destructive_size) std::atomic<std::uint64_t> external_created{0};
  std::atomic<std::uint64_t> detached_errors_reported{0};
  // Threads that are not workers, blocked in future::get, task_group::wait, wait_idle.
  external_waiters ext;

  std::vector<pthread_t> threads;
  std::unique_ptr<std::latch> start_latch;  // workers and the constructor meet here once
  std::atomic<bool> start_failed{false};    // a worker thread could not start: the others leave
  strata::runtime* self = nullptr;  // the public object (this_runtime())
  // Actors (actor.cpp): turn budget, the MPI rank in addresses, round-robin
  // spawn counter (RMW by spawners), the supervisor (guarded by its mutex:
  // read on each failure, which is rare).
  unsigned actor_budget = 64;
  unsigned rank = 0;
  std::atomic<std::uint32_t> next_actor_worker{0};
  std::mutex supervisor_mutex;
  strata::supervisor supervisor;
  // Load monitor (actor.cpp): a thread that samples the workers every
  // period and asks a busy worker to move an elastic actor to a light one.
  std::thread monitor;
  std::mutex monitor_mutex;             // guards monitor_stop
  std::condition_variable monitor_cv;   // shutdown wakes the monitor
  bool monitor_stop = false;
  // Lock-mode resources and their blocked tasks (resource.cpp); tasks
  // submitted with access and not yet finished (wait_idle waits for them;
  // RMW by submitters and finishing tasks).
  std::unique_ptr<access_dispatcher> access;
  // Lock-mode requests started and finished by threads outside the workers
  // (the workers count theirs in worker_counters); release increments,
  // acquire reads in wait_idle.
  std::atomic<std::uint64_t> external_lock_submitted{0};
  std::atomic<std::uint64_t> external_lock_released{0};
  std::uint64_t start_ns = 0;
};

// Runs the task frame t on worker w: the callable, its completion, the frame's
// return to its pool (task_group.hpp).
void run_task(worker& w, task* t) noexcept;
// Reports a finished task to its group (task_group.hpp).
void complete_task(worker& w, task_group* g, completion how) noexcept;

// Every k_injector_period-th task: serve the inbox and the node injector even
// while the deque is busy, so nothing starves (worker_loop.cpp).
void poll_sources(worker& w) noexcept;

// Helps (runs other tasks) until pred(ctx) holds: task_group::wait and
// future::get on a worker (worker_loop.cpp).
void help_until(worker& w, bool (*pred)(const void*), const void* ctx);

// Hands a task created outside the runtime's workers to the injector of the
// caller's NUMA node and wakes a worker if nobody spins (runtime.cpp).
// Throws runtime_error after shutdown began.
void submit_external(runtime_core& rt, task* t, bool admitted = false);
// Hands a task to one worker's inbox; it runs on that worker (runtime.cpp).
void submit_to_worker(runtime_core& rt, unsigned worker, task* t, bool admitted = false);
// A thread outside the workers that will submit several frames as one
// operation: admitted once (runtime_error after shutdown began), and
// shutdown waits until it ends. Its submissions pass admitted = true.
void admit_external(runtime_core& rt);
void end_external(runtime_core& rt) noexcept;

// Starts / stops the load monitor thread (actor.cpp).
void start_monitor(runtime_core& rt, unsigned period_ms);
void stop_monitor(runtime_core& rt) noexcept;

// A frame for a task or message of rt: from the pool of w when w is one of
// rt's workers, else from the heap (home = k_no_home).
inline task* frame_for(runtime_core& rt, worker* w) {
  if (w != nullptr && w->rt == &rt) return w->pool.allocate();
  task* t = new task{};
  t->home = k_no_home;
  return t;
}

// A frame for a detached task of rt, its callable not yet built (frame_for).
inline task* detached_frame(runtime_core& rt, worker* w) {
  task* t = frame_for(rt, w);
  t->group = nullptr;
  t->how = completion::detached;
  return t;
}

// Spawn fast path. Private push; then, only if a thief asked for work or
// the private part was empty and some worker idles, share and maybe wake.
// Counted (before it can be shared: wait_idle must never see a thief's
// execution of it without its spawn) unless `counted` is false: a
// parallel_invoke join frame (see worker::join_poll_at).
template <bool counted = true>
inline void push_local(worker& w, task* t) noexcept {
  const bool was_empty = w.deque.private_size() == 0;
  w.deque.push(t);
  if constexpr (counted) w.counters.spawned.add();
  // relaxed: a hint; the publishing slow path re-reads idle after a fence.
  if (w.deque.requested() || (was_empty && w.idle->word.load(std::memory_order_relaxed) != 0)) publish_and_wake(w);
}

}  // namespace strata::detail
