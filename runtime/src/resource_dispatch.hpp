// The lock-mode dispatcher's state (see resource.hpp for the protocol).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>

#include <strata/runtime/resource.hpp>

namespace strata::detail {

// Blocked requests of one resource, highest priority first, then oldest.
struct request_order {
  bool operator()(const access_request* a, const access_request* b) const noexcept {
    if (a->prio != b->prio) return a->prio > b->prio;
    return a->seq < b->seq;
  }
};

struct access_dispatcher {
  access_dispatcher(unsigned front_run_limit, unsigned workers)
      : front_runs(front_run_limit), admission(64 * static_cast<std::uint64_t>(workers)) {}

  // Resources: created under create_mutex, never freed before the runtime.
  std::mutex create_mutex;
  std::deque<resource_state> resources;

  // The dispatcher role, guarded by `mutex`: each blocked request waits in
  // the queue of the resource whose lock refused it (waiting[id - 1]).
  std::mutex mutex;
  std::deque<std::set<access_request*, request_order>> waiting;
  // Blocked requests (RMW under the mutex; read relaxed as a statistic by
  // submitters, see admission). Releasers look at each resource's
  // `waiters` instead (resource.cpp, announce).
  std::atomic<std::uint64_t> blocked{0};
  std::atomic<std::uint64_t> next_seq{0};     // request ages (RMW by submitters)
  std::atomic<std::uint32_t> next_worker{0};  // round robin for requests dispatched at submission
  const unsigned front_runs;               // config::reader_front_runs
  // A submission whose locks look busy goes straight to the queues while
  // fewer requests than this are blocked (so that what piles up behind a
  // busy resource is ordered by priority from the start); beyond it, it is
  // spawned and queued only if its run finds it refused. A flood of
  // submissions then waits in the deques and injectors (cheap FIFO
  // pushes), not in ordered queues that every release rescans and that
  // redistribution re-sorts: 10^6 tasks over 64 resources took 58 s that
  // way, 5 s this way.
  const std::uint64_t admission;
};

}  // namespace strata::detail
