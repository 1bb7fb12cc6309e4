// The out-of-line parts of running a task (declared in task_group.hpp):
// frames going home to another worker's pool, detached exceptions, and the
// fairness poll every k_injector_period-th task.
#include <cstdio>
#include <exception>
#include <string>
#include <utility>

#include <strata/runtime/ext/trace.hpp>
#include <strata/runtime/task_group.hpp>

#include "find_work.hpp"
#include "lanes.hpp"

namespace strata::detail {

void free_frame_away(worker& w, task* t) noexcept { w.pool.free_to(pool_of_home(*w.rt, t->home), t); }

void report_detached_exception(worker& w, std::exception_ptr e) noexcept {
  w.counters.detached_exceptions.add();
  // Reported once per runtime (the count is in stats()).
  if (w.rt->detached_errors_reported.fetch_add(1, std::memory_order_relaxed) != 0) return;  // relaxed: a count
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(std::move(e));
  } catch (const std::exception& ex) {
    what = ex.what();
  } catch (...) {
  }
  std::fprintf(stderr, "strata: a detached task threw: %s (further ones are counted in stats())\n", what.c_str());
}

void run_task_traced(worker& w, task* t) noexcept {
  const std::uint64_t start = trace_now();
  execute_task(w, t);
  // Recorded before the fairness poll: what the poll runs is not this task.
  w.trace->span(trace_kind::task, start);
  if (--w.ticks_left <= 0) fairness_poll(w);
}

void fairness_poll(worker& w) noexcept {
  w.ticks_left = k_injector_period;
  w.join_poll_at = w.counters.joins_inline.get() + k_injector_period;
  // Sampled here (every k_injector_period tasks) rather than on every push;
  // the real size (the cached top can be far behind the thieves).
  w.counters.high_water.max(static_cast<std::uint64_t>(w.deque.size()));
  if (task* t = pop_injector(w, node_of(w))) {
    w.deque.push(t);  // moved, not created: not counted as a spawn
    if (w.deque.requested() || w.idle->word.load(std::memory_order_relaxed) != 0) publish_and_wake(w);  // relaxed: hint
  }
  if (task* t = take_from_lanes(w)) w.deque.push(t);  // moved, as above
  if (task* t = pop_inbox(w)) run_task(w, t);
  // One unit of every work source even while the deque is busy: tasks
  // cannot starve actors.
  if (sources_of(w) != 0) poll_sources(w, 1);
}

}  // namespace strata::detail
