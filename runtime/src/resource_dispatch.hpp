// The lock-mode dispatcher's state (see resource.hpp for the protocol).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <vector>

#include <strata/runtime/resource.hpp>

namespace strata::detail {

// Blocked requests of one holder, highest priority first, then oldest.
struct request_order {
  bool operator()(const access_request* a, const access_request* b) const noexcept {
    if (a->prio != b->prio) return a->prio > b->prio;
    return a->seq < b->seq;
  }
};

struct access_dispatcher {
  access_dispatcher(unsigned front_run_limit, unsigned workers)
      : front_runs(front_run_limit), in_flight_cap(workers * 4 > 8 ? workers * 4 : 8) {}

  // Resources: created under create_mutex, never freed before the runtime.
  std::mutex create_mutex;
  std::deque<resource_state> resources;

  // The dispatcher role, guarded by `mutex`: each blocked request waits in
  // the queue of the resource whose lock refused it (waiting[id - 1]).
  std::mutex mutex;
  std::deque<std::set<access_request*, request_order>> waiting;
  // Requests that wait only for a free slot among the in-flight tasks
  // (not for a lock): taken highest priority first as tasks finish.
  std::set<access_request*, request_order> deferred;
  // Requests announced blocked: raised (seq_cst) before the locked retry,
  // read (seq_cst) by releasers after their release; see release_access.
  std::atomic<std::uint64_t> blocked{0};
  std::atomic<std::uint64_t> next_seq{0};     // request ages (RMW by submitters)
  std::atomic<std::uint32_t> next_worker{0};  // round robin for fresh requests
  const unsigned front_runs;                  // config::reader_front_runs
  // Tasks holding their locks (dispatched, not finished): RMW by
  // dispatchers and finishing tasks. Fresh requests beyond the cap wait in
  // `deferred`: locks are held only while a task is about to run, so they
  // reflect real conflicts, not a queue of a hundred thousand tasks that
  // hold their accounts while they wait for a worker.
  std::atomic<std::uint64_t> in_flight{0};
  const unsigned in_flight_cap;
};

}  // namespace strata::detail
