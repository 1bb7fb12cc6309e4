// access_system: lock mode's state of one runtime, a subsystem of its core
// (resource.hpp tells the protocol).
//
// Quiescence: a lock-mode task that is a heap request (it waits in a queue,
// or its list or body did not fit a frame) is counted here: submitted
// before anything can run it, released after it ran and released its locks
// (per worker, or in the external counters for threads outside the
// workers). wait_idle reads released (finished()) before submitted
// (created()) with every other part's counts (quiescence.cpp in the core).
// A task that travels in a frame is a task frame and counted as one.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <strata/access/resource.hpp>
#include <strata/runtime/ext/subsystem.hpp>
#include <strata/runtime/ext/worker.hpp>

namespace strata::detail {

// Blocked requests of one resource, highest priority first, then oldest.
struct request_order {
  bool operator()(const access_request* a, const access_request* b) const noexcept {
    if (a->prio != b->prio) return a->prio > b->prio;
    return a->seq < b->seq;
  }
};

// Per worker, written by that worker only.
struct alignas(k_destructive_size) access_counters {
  counter submitted;  // heap requests started on this worker
  counter released;   // heap requests that ran and released their locks here
  counter queued;     // requests this worker put into the dispatcher's queues
};

class access_system final : public subsystem {
 public:
  static constexpr char key = 0;  // subsystem_key: &access_system::key

  explicit access_system(runtime_core& core);

  std::uint64_t finished() const noexcept override;
  std::uint64_t created() const noexcept override;
  void add_stats(runtime_stats& s) const override;

  access_counters& counters_of(unsigned worker) noexcept { return m_counters[worker]; }
  // Counts a heap request started (released = false) or finished by the
  // calling thread: its worker's counters on a worker of this runtime, else
  // the external ones (release increments: wait_idle's acquire reads).
  void count(bool released) noexcept;

  runtime_core& core;

  // Resources: created under create_mutex, never freed before the runtime.
  // A released one (release_resource) waits in `free` for make_resource to
  // hand its state out again under a new generation: states are reused,
  // never freed, so a handle used after its release can at worst exclude
  // tasks of the resource that reuses its state, never touch freed memory.
  std::mutex create_mutex;
  std::deque<resource_state> resources;
  std::vector<resource_state*> free;

  // The dispatcher role, guarded by `mutex`: each blocked request waits in
  // the queue of the resource whose lock refused it (waiting[id - 1]).
  std::mutex mutex;
  std::deque<std::set<access_request*, request_order>> waiting;
  // Blocked requests (RMW under the mutex; read relaxed as a statistic by
  // submitters, see admission). Releasers look at each resource's
  // `waiters` instead (dispatch.cpp, announce).
  std::atomic<std::uint64_t> blocked{0};
  std::atomic<std::uint64_t> next_seq{0};     // request ages (RMW by submitters)
  std::atomic<std::uint32_t> next_worker{0};  // round robin for requests dispatched at submission
  const unsigned front_runs;                  // config::reader_front_runs
  // A submission whose locks look busy goes straight to the queues while
  // fewer requests than this are blocked (so that what piles up behind a
  // busy resource is ordered by priority from the start); beyond it, it is
  // spawned and queued only if its run finds it refused. A flood of
  // submissions then waits in the deques and injectors (cheap FIFO
  // pushes), not in ordered queues that every release rescans and that
  // redistribution re-sorts.
  const std::uint64_t admission;

 private:
  std::unique_ptr<access_counters[]> m_counters;
  // Heap requests of threads outside the workers (RMW, release).
  alignas(k_destructive_size) std::atomic<std::uint64_t> m_external_submitted{0};
  std::atomic<std::uint64_t> m_external_released{0};
};

inline access_system& system_of(const access_lock* locks) noexcept { return *locks[0].res()->sys; }

}  // namespace strata::detail
