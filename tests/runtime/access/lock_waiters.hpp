// Test support for the lock-mode tests' handshakes: how many blocked
// requests ask for a resource. The dispatcher counts them in the
// resource's `waiters` (ext/lock_word.hpp; +1 when a request is queued,
// whether at submission or refused when it ran, -1 when a release lets it
// through), so a test can wait until the tasks it submitted are queued
// instead of sleeping and hoping they are.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>

#include <strata/access/resource.hpp>
#include <strata/runtime/runtime.hpp>

#include "runtime_config.hpp"

namespace strata::test {

inline std::uint32_t blocked_on(const strata::resource& r) {
  return r.state()->waiters.load(std::memory_order_seq_cst);  // seq_cst: as the dispatcher's RMWs
}

// Requests the workers put into the dispatcher's queues (lock mode's
// "lock_requests_queued" counter): those refused when they ran on a worker,
// not those a thread outside queued at submission.
inline std::uint64_t queued_by_workers(const strata::runtime& rt) {
  std::uint64_t n = 0;
  for (const auto& w : rt.stats().workers) n += w.counter("lock_requests_queued");
  return n;
}

// Runs `submit` (one lock-mode submission) so that a worker the test holds
// in a task (`held`, of two) cannot strand it: on the test thread under
// tiered_stealing (the free worker takes what it submits); under
// pinned_mpsc and hybrid, which do not steal and would send every other
// submission to the held worker's inbox, inside a task on the free worker,
// whose spawn goes home there: the request meets the dispatcher on the free
// worker, in the order the test submits. Returns what `submit` returns.
template <class F>
auto submit_off(strata::runtime& rt, unsigned held, F&& submit) {
  if (steals()) return submit();
  return rt.submit_on(strata::worker_id{1 - held}, std::forward<F>(submit)).get();
}

// submit_off for a test that needs its requests to meet the dispatcher in
// the order it submits them. Under pinned_mpsc and hybrid, submit_off only
// puts the request's frame on the free worker's deque; the worker looks at
// its inbox before its deque, so the next submission's task can run first
// and push its frame on top (LIFO), and beyond hybrid_bound frames spill
// to the shared queue: either reorders them. So this also waits until the
// free worker has run the frame (its executed count: the submitting task
// and the frame; the frame's body must be short or refused).
template <class F>
auto submit_off_in_order(strata::runtime& rt, unsigned held, F&& submit) {
  if (steals()) return submit();
  const unsigned free = 1 - held;
  const std::uint64_t before = rt.stats().workers[free].tasks_executed;
  auto result = rt.submit_on(strata::worker_id{free}, std::forward<F>(submit)).get();
  while (rt.stats().workers[free].tasks_executed < before + 2) std::this_thread::yield();
  return result;
}

}  // namespace strata::test
