// Submission from anywhere: a worker's own deque (the fast path is inline,
// ext/spawn.hpp), the calling thread's lane for a thread outside the
// workers (lanes.hpp; the injector of its NUMA node when it has none), or
// one worker's inbox (submit_on, routed frames).
//
// Shutdown against submitters is a Dekker pair: a submitter from outside
// raises active_submits, then reads accepting; shutdown clears accepting,
// then waits until active_submits is 0 (all seq_cst). So a submission either
// is refused (runtime_error, its frame freed) or is counted before shutdown
// waits for the last task.
#include <sched.h>

#include <optional>
#include <string>

#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>

#include "injector.hpp"
#include "lanes.hpp"
#include "parking.hpp"
#include "policy.hpp"

namespace strata::detail {
namespace {

[[noreturn]] void refuse_submission() {
  throw runtime_error("strata: the runtime is shutting down or shut down; it takes no new tasks");
}

// Guards a submission from outside against a concurrent shutdown.
struct submit_guard {
  runtime_core& rt;
  explicit submit_guard(runtime_core& r, task* t) : rt(r) {
    // seq_cst: Dekker with shutdown (store accepting=false, then read active_submits).
    rt.active_submits.fetch_add(1, std::memory_order_seq_cst);
    if (!rt.accepting.load(std::memory_order_seq_cst)) {
      rt.active_submits.fetch_sub(1, std::memory_order_seq_cst);
      if (t->destroy != nullptr) t->destroy(t);
      discard_external_frame(rt, t);
      refuse_submission();
    }
  }
  ~submit_guard() { rt.active_submits.fetch_sub(1, std::memory_order_seq_cst); }  // seq_cst: shutdown waits for 0
  submit_guard(const submit_guard&) = delete;
  submit_guard& operator=(const submit_guard&) = delete;
};

std::size_t caller_node(const runtime_core& rt) noexcept {
  const int cpu = sched_getcpu();
  if (cpu >= 0 && static_cast<std::size_t>(cpu) < rt.node_of_cpu.size()) {
    return static_cast<std::size_t>(rt.node_of_cpu[static_cast<std::size_t>(cpu)]) % rt.injectors.size();
  }
  return 0;
}

}  // namespace

void admit_external(runtime_core& rt) {
  // seq_cst: Dekker with shutdown, as in submit_guard.
  rt.active_submits.fetch_add(1, std::memory_order_seq_cst);
  if (!rt.accepting.load(std::memory_order_seq_cst)) {
    rt.active_submits.fetch_sub(1, std::memory_order_seq_cst);
    refuse_submission();
  }
}

void end_external(runtime_core& rt) noexcept {
  rt.active_submits.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: shutdown waits for 0
}

void submit_external(runtime_core& rt, task* t, bool admitted) {
  worker* w = current_worker();
  if (w != nullptr && w->rt == &rt) {  // a worker of this runtime: its own deque
    w->counters.spawned.add();
    if (w->deque.private_size() >= w->spill_at) [[unlikely]] {  // hybrid's bound (spawn.hpp)
      spill_task(*w, t);
      return;
    }
    w->deque.push(t);
    publish_and_wake(*w);
    return;
  }
  if (!rt.steals) {  // pinned_mpsc, hybrid: round robin to the workers' inboxes (policy.cpp)
    submit_home(rt, t, admitted);
    return;
  }
  if (external_lane* lane = caller_lane(rt)) {
    submit_on_lane(rt, *lane, t, admitted);
    return;
  }
  const std::size_t node = caller_node(rt);
  // Wake near a worker of that node.
  unsigned near = 0;
  for (const auto& p : rt.plan.workers()) {
    if (static_cast<std::size_t>(p.numa_node) == node) {
      near = p.worker;
      break;
    }
  }
  submit_to_injector(rt, t, node, near, admitted);
}

void submit_to_injector(runtime_core& rt, task* t, std::size_t node, unsigned near, bool admitted) {
  std::optional<submit_guard> guard;
  if (!admitted) guard.emplace(rt, t);
  rt.external_created.fetch_add(1, std::memory_order_release);  // release: wait_idle counts it
  rt.injectors[node]->push(t);
  maybe_wake(rt, near);
}

void submit_to_worker(runtime_core& rt, unsigned index, task* t, bool admitted) {
  worker* w = current_worker();
  std::optional<submit_guard> guard;
  if (w != nullptr && w->rt == &rt) {
    w->counters.spawned.add();
  } else {
    if (!admitted) guard.emplace(rt, t);
    rt.external_created.fetch_add(1, std::memory_order_release);  // release: wait_idle counts it
  }
  if (rt.trace != nullptr) [[unlikely]] {
    // Before the push: once it is there, the target may run and free t.
    const std::uint64_t actor = t->how == completion::routed ? t->tag : 0;
    if (trace_ring* r = trace_here(rt)) r->instant(trace_kind::message, index, actor);
  }
  worker& target = *rt.workers[index];
  target.inbox.push(t);
  notify_worker(target);
}

std::size_t default_grain(const runtime& rt, std::size_t n) noexcept {
  const std::size_t pieces = 8 * static_cast<std::size_t>(rt.num_workers());
  return n / pieces > 0 ? n / pieces : 1;
}

runtime& current_runtime(const char* what) {
  runtime* r = this_runtime();
  if (r == nullptr) {
    throw usage_error(std::string(what) + " without a runtime argument must be called from inside a task");
  }
  return *r;
}

bool others_idle(runtime& rt) noexcept {
  const runtime_core& core = rt.core();
  std::uint64_t idle = 0;
  for (std::size_t p = 0; p < core.num_packages; ++p) {
    const std::uint64_t x = core.idle[p].word.load(std::memory_order_relaxed);  // relaxed: a heuristic
    idle += spinners_of(x) + sleepers_of(x);
  }
  return idle + 1 >= core.workers.size();
}

bool on_worker_of(const runtime& rt) noexcept {
  worker* w = current_worker();
  return w != nullptr && w->rt->self == &rt;
}

}  // namespace strata::detail
