// The spawn fast path and task frames for modules built on the core.
//
// A spawn on a worker is a frame from the worker's pool, the callable built
// in place, and a push on the private part of its deque: a few plain
// operations, no fence. Work is shared only when a thief asked for it (the
// deque's request flag) or when the worker's deque was empty and some worker
// of its package idles: then the private part is published and, if nobody
// spins, a sleeper is woken (publish_and_wake).
#pragma once

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/ext/worker.hpp>

namespace strata::detail {

// A frame for a task w is about to push on its own deque. The deque's room
// comes first (reserve_one), so a refused allocation (numa_bad_alloc) is
// thrown here, before anything exists to undo, and the push cannot fail.
inline task* spawn_frame(worker& w) {
  w.deque.reserve_one();
  return w.pool.allocate();
}

// A frame for a task or message of rt: from the pool of w when w is one of
// rt's workers (spawn_frame), else from the heap (home = k_no_home).
inline task* frame_for(runtime_core& rt, worker* w) {
  if (w != nullptr && w->rt == &rt) return spawn_frame(*w);
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

// Pushes t on w's deque. Counted (before it can be shared: wait_idle must
// never see a thief's execution of it without its spawn) unless `counted`
// is false: a parallel_invoke join frame (see worker::join_poll_at).
template <bool counted = true>
inline void push_local(worker& w, task* t) noexcept {
  const bool was_empty = w.deque.private_size() == 0;
  if constexpr (counted) {
    // policy::hybrid's soft bound (private_size is the whole deque there:
    // nothing is published). Join frames (counted = false) never spill:
    // their owner's join pops them back.
    if (w.deque.private_size() >= w.spill_at) [[unlikely]] {
      w.counters.spawned.add();
      spill_task(w, t);
      return;
    }
  }
  w.deque.push(t);
  if constexpr (counted) w.counters.spawned.add();
  // relaxed: a hint; the publishing slow path re-reads idle after a fence.
  if (w.deque.requested() || (was_empty && w.idle->word.load(std::memory_order_relaxed) != 0)) publish_and_wake(w);
}

}  // namespace strata::detail
