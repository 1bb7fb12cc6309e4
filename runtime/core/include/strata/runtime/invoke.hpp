// parallel_invoke: runs two callables, possibly at the same time, and
// returns when both have finished.
//
//   long fib(int n) {
//     if (n < 2) return n;
//     long x, y;
//     strata::parallel_invoke([&] { x = fib(n - 1); }, [&] { y = fib(n - 2); });
//     return x + y;
//   }
//
// The cheapest fork-join strata has, for recursive divide and conquer (the
// shape of Cilk's spawn/sync and Lace's SPAWN/SYNC). A task_group pays for
// its generality on every task: a frame from the pool, the group's
// counters, an indirect call and an exception box. Here the frame of the
// first callable lives on the caller's stack, and the join knows the
// callable's type:
//   1. The frame (its run function, a pointer to the first callable, a done
//      flag) is pushed on the worker's deque; the second callable runs at
//      once.
//   2. If the frame is still on top of the deque's private part, nobody
//      stole it (thieves only take from the shared part): pop it and call
//      the first callable directly. No atomic read-modify-write, no fence,
//      no allocation, and one counter: the worker's count of inline joins
//      (worker::join_poll_at), not a spawn and an execution.
//   3. Otherwise a thief has it (or it was shared and is still waiting):
//      help, running other tasks, until its done flag is raised. The
//      worker that ran the frame raises the flag (release) as its last
//      access to it, since the frame dies when this function returns.
//
// Exceptions: a stolen first callable's exception travels in the frame and
// is rethrown after the join. If the second callable throws, the first is
// still run and joined (its frame is on this stack) and the second's
// exception leaves; a second exception from the first is dropped.
//
// Outside a worker there is no deque to put the frame on: usage_error
// (submit a task that calls it, or use task_group{rt}).
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/spawn.hpp>
#include <strata/runtime/ext/wait.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/task_group.hpp>

namespace strata {

namespace detail {

[[noreturn]] void invoke_outside();
// Boxes the exception being handled into the frame's state (invoke.cpp).
void keep_join_error(join_state& s) noexcept;
// Helps until the join frame t is done, then rethrows its callable's
// exception, if any (invoke.cpp).
void wait_join(worker& w, task* t);
// The first callable after the second one threw: run or wait for it,
// swallowing what it throws (invoke.cpp).
void join_after_throw(worker& w, task* t) noexcept;

template <class F>
void run_joined(task* t) {
  join_state& s = join_state_of(t);
  try {
    (*static_cast<F*>(s.fn))();
  } catch (...) {
    keep_join_error(s);
  }
}

}  // namespace detail

template <class F, class G>
void parallel_invoke(F&& first, G&& second) {
  detail::worker* w = detail::current_worker();
  if (w == nullptr) detail::invoke_outside();
  using fn = std::remove_reference_t<F>;
  w->deque.reserve_one();  // the push below cannot grow the deque, so cannot fail (ext/spawn.hpp)
  detail::task frame(detail::join_frame_tag{}, &detail::run_joined<fn>, w->running_group);
  // std::construct_at, not `= ::new (p) T{}`: cppcheck 2.10 cannot parse the latter (internalAstError).
  // (join_state is trivially destructible: nothing ends its life.)
  detail::join_state* st = std::construct_at(reinterpret_cast<detail::join_state*>(frame.storage));
  st->fn = const_cast<void*>(static_cast<const void*>(std::addressof(first)));
  detail::push_local<false>(*w, &frame);  // uncounted: see worker::join_poll_at
  try {
    second();
  } catch (...) {
    detail::join_after_throw(*w, &frame);
    throw;
  }
  if (w->deque.peek_private() == &frame) {
    // Not stolen: the join is a pop and a direct call.
    w->deque.drop_private();
    detail::tick_inline_join(*w);
    first();
    return;
  }
  detail::wait_join(*w, &frame);
}

}  // namespace strata
