// work_source: work that a worker finds somewhere other than its inbox, its
// deque, the injectors and its victims: actors' turns, later the MPI
// bridge's progress and an event loop. The core knows none of them; each
// plugs in here.
//
// The contract, for a source registered on worker w (runtime_core::add_source):
// - The worker calls ready() and poll() from its own thread only, between
//   tasks. poll(w, budget) runs at most `budget` units of the source's work
//   without blocking and returns how many it ran; the worker loop calls it
//   with a chain budget when its own deque is empty, and with a budget of 1
//   at every fairness poll (every k_injector_period tasks or productive
//   polls), so tasks, sources and the injector cannot starve each other.
// - ready() says, without running anything, whether poll would find work.
//   The spin phase asks it, and so does the parking re-check: a worker that
//   announced that it is about to sleep asks every source before it sleeps.
//   So a producer that feeds a source from another thread must publish its
//   work, then call notify_worker(w) (worker.hpp), which fences and wakes w
//   if it sleeps: either the re-check sees the work or the producer sees the
//   sleeper (the two-phase parking protocol in parking.cpp).
// - A frame pushed into w's inbox with how == completion::routed and
//   sink == the source's index is handed to accept(w, t) when the worker
//   pops it, instead of being run: that is how a message reaches an actor's
//   mailbox on another worker. The frame stays in flight for wait_idle (it
//   was counted as spawned) until the source counts it executed.
// - A source may supply the worker's idle wait (supplies_idle_wait: at most
//   one per worker). The worker then sleeps in idle_wait() instead of on its
//   futex, and a waker calls wake_idle(): an event loop sleeps in epoll on
//   its descriptors plus an eventfd. idle_wait may return early for any
//   reason (the worker re-checks everything); it must return soon after
//   wake_idle() was called, including a call made before it started.
//   ready_sees_idle_events() says whether the spin could see what ends it.
#pragma once

#include <cstddef>

namespace strata::detail {

struct worker;
struct task;

class work_source {
 public:
  work_source() = default;
  work_source(const work_source&) = delete;
  work_source& operator=(const work_source&) = delete;
  virtual ~work_source() = default;

  virtual bool ready(worker& w) noexcept = 0;
  virtual std::size_t poll(worker& w, std::size_t budget) noexcept = 0;
  // A routed frame for this source. The default runs nothing and reports a
  // bug: a source that has frames routed to it must override it.
  virtual void accept(worker& w, task* t) noexcept;

  virtual bool supplies_idle_wait() const noexcept { return false; }
  virtual void idle_wait(worker& w) noexcept;
  virtual void wake_idle() noexcept {}
  // Whether ready() sees what ends this source's idle wait on its own (the
  // MPI bridge's tests its receive requests). If not (an event loop's
  // descriptors are known to epoll_wait only), the local spin before a park
  // cannot catch those events, and a park they ended soon is no reason to
  // spin longer next time (parking.cpp, adapt_local_spin).
  virtual bool ready_sees_idle_events() const noexcept { return true; }
};

}  // namespace strata::detail
