// Scheduling policies (config.policy, STRATA_POLICY): what each one changes
// in where a task goes and where a worker looks for one.
//
// tiered_stealing (the default): the rest of the core as find_work.cpp,
// lanes.hpp and parking.cpp tell it. Work spreads by stealing.
//
// pinned_mpsc (seed 003): a task runs where it was put. Each worker's queue
// is its inbox (an MPSC queue: what other threads send it) plus its deque,
// which nobody steals from (what it spawns itself, run LIFO by its owner).
// - A submission from a thread outside the workers goes round robin to a
//   worker's inbox (next_home), a spawn or submit on a worker onto its own
//   deque ("goes home"), submit_on and actor messages to the inbox of the
//   worker named (sticky work never moves). No lanes, no injector.
// - Workers never look at another worker's queue: find_shared finds
//   nothing, nothing is published, and a worker that finds work wakes
//   nobody else (there is no search to keep going). A producer wakes the
//   one worker it gave work to (notify_worker: its `sleeping` word).
// - The actors' load monitor does not run: elastic actors stay where they
//   were placed unless the program migrates them (runtime::migrate_actor).
// - Loops (parallel.hpp) start on the owners' chunks whenever there are at
//   least as many pieces as workers: a static schedule, as OpenMP's; with
//   no stealing, a loop split on one worker would run on that worker alone.
// What it buys: no thief ever touches a busy worker's lines, a task's data
// stays in its worker's caches, idle workers do not search (fewer context
// switches and migrations); what it costs: an unbalanced load stays
// unbalanced.
//
// hybrid (franz1981's follow-up to seed 003): pinned_mpsc with soft-bounded
// queues. A worker's deque holds up to hybrid_bound tasks; a spawn beyond
// that, and a submission from outside that finds its worker's inbox at the
// bound, goes to the spill queue instead: the injector (an MPMC queue) of
// the worker's NUMA node, one on a machine with one node. Every worker
// drains its node's spill queue one task every k_injector_period-th task
// (61, prime: fairness_poll in run.cpp) whatever else it has, and when it
// runs out of its own work (find_shared, in the re-check before it parks:
// the other nodes' queues too). An idle worker does not spin searching, as
// under pinned_mpsc (parking.cpp): a spill wakes a sleeping worker instead
// (maybe_wake). Sticky work (submit_on, actor messages, loop chunks sent to
// their owners) never spills. So a balanced load behaves like pinned_mpsc
// and the overflow of an unbalanced one is shared.
//
// Rejected: a spill queue per worker that others steal from (that is
// tiered stealing again, with its thieves on the busy worker's lines), and
// bounding the inbox itself (a producer would have to block or fail).
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/spawn.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/runtime.hpp>

#include "find_work.hpp"
#include "injector.hpp"
#include "parking.hpp"
#include "policy.hpp"

namespace strata::detail {

void apply_policy(runtime_core& rt) noexcept {
  rt.steals = rt.settings.policy == policy::tiered_stealing;
  rt.shares = rt.settings.policy != policy::pinned_mpsc;
}

std::int64_t spill_bound(const runtime_core& rt) noexcept {
  return rt.settings.policy == policy::hybrid ? static_cast<std::int64_t>(rt.settings.hybrid_bound) : INT64_MAX;
}

void spill_task(worker& w, task* t) noexcept {
  w.counters.spilled.add();
  w.rt->injectors[node_of(w)]->push(t);
  maybe_wake(*w.rt, w.index);
}

void submit_home(runtime_core& rt, task* t, bool admitted) {
  const auto n = static_cast<std::uint32_t>(rt.workers.size());
  const std::uint32_t home = rt.next_home.fetch_add(1, std::memory_order_relaxed) % n;  // relaxed: a hint
  worker& target = *rt.workers[home];
  if (rt.shares && target.inbox.depth() >= rt.settings.hybrid_bound) {
    rt.external_spills.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
    submit_to_injector(rt, t, node_of(target), home, admitted);
    return;
  }
  submit_to_worker(rt, home, t, admitted);
}

bool policy_steals(runtime& rt) noexcept { return rt.core().steals; }

}  // namespace strata::detail
