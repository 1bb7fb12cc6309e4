// Finding work (find_work.cpp has the order and the steal tiers). Internal
// to the core: the worker loop, the parking protocol and the engine use it.
#pragma once

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/task_group.hpp>

namespace strata::detail {

// A task from w's inbox, or nullptr; routed frames met on the way go to
// their work sources (at most a bounded number per call: w.inbox_backlog
// then says more may be queued).
task* pop_inbox_items(worker& w) noexcept;

// Checked before every task: an empty inbox (the common case) is three
// loads here, not a call.
inline task* pop_inbox(worker& w) noexcept {
  if (w.inbox.empty()) {
    w.inbox_backlog = false;
    return nullptr;
  }
  return pop_inbox_items(w);
}

// The worker's own queues, inline: the source of almost every task in a busy
// worker. A thief's request is served on the way (publish part of the deque).
inline task* find_local(worker& w) noexcept {
  if (task* t = pop_inbox(w)) return t;
  if (task* t; w.deque.pop(t)) [[likely]] {
    if (w.deque.requested()) publish_and_wake(w);
    return t;
  }
  return nullptr;
}

// A task from the injector of NUMA node `node`, or nullptr (counted).
task* pop_injector(worker& w, std::size_t node) noexcept;
// The NUMA node (logical index) of worker w's place.
std::size_t node_of(const worker& w) noexcept;

// Past the worker's own queues: its node's injector, then steals tier by
// tier (`far`: also beyond the NUMA node, and the other nodes' injectors).
task* find_shared(worker& w, bool far) noexcept;

// A task from any of those, in that order.
inline task* find_task(worker& w, bool far) noexcept {
  if (task* t = find_local(w)) return t;
  return find_shared(w, far);
}

// Work sources (work_source.hpp): ready() and poll() of each, in index order.
inline unsigned sources_of(const worker& w) noexcept {
  return w.num_sources.load(std::memory_order_acquire);  // acquire: pairs with add_source's release
}
bool sources_ready(worker& w) noexcept;
std::size_t poll_sources(worker& w, std::size_t budget) noexcept;

// Units a work source may run per poll from the worker loop (a chain of
// actor turns, for instance) before the worker looks at its queues again.
inline constexpr std::size_t k_source_budget = 16;

// run_one past the worker's own queues: the work sources, then the
// injectors and the victims.
bool run_elsewhere(worker& w, bool far) noexcept;

// Runs one unit of work if there is one: a task of the worker's own queues,
// else a poll of its work sources, else a task from the injectors or a
// victim. True when it ran something. Inline up to the own queues, so that
// the worker loop pays no call per task.
inline bool run_one(worker& w, bool far) noexcept {
  if (task* t = find_local(w)) [[likely]] {
    run_task(w, t);
    return true;
  }
  return run_elsewhere(w, far);
}

// Tiers beyond the NUMA node are tried every k_far_period-th idle round, and
// always in the parking re-check: a victim close by often gets work a moment
// later (after publishing on our request), and a local steal is much cheaper
// than a remote one.
inline constexpr int k_far_period = 4;

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace strata::detail
