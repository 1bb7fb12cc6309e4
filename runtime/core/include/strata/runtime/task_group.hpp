// task_group: run tasks, then wait for all of them.
//
//   strata::task_group g;          // inside a task: binds to that worker's runtime
//   g.run([&] { left(); });
//   right();
//   g.wait();                      // helps; rethrows the first exception
//
// Counting without atomics on the fork-join fast path. A group created on a
// worker has an owner (that worker). The owner keeps one plain single-writer
// counter, outstanding = tasks it spawned - those it finished itself; a task
// run by any other worker (stolen) bumps the atomic stolen_finished; a task
// spawned by anyone but the owner (another worker, a thread outside the
// runtime) goes through the atomic foreign_pending. The group is done when
//   outstanding == stolen_finished  and  foreign_pending == 0.
// stolen_finished only grows and readers load it before outstanding: a
// reader that sees equality knows that, when it read outstanding, no task
// spawned by the owner was still pending (pending = outstanding -
// stolen_finished, which cannot go below zero).
//
// Memory ordering: a task's effects happen-before wait() returns (release
// increments by thieves, acquire loads in done(); owner-run tasks are the
// waiter's own thread or are published by the release store of its counter).
//
// Errors: waiting on the group of the task you are running is a
// usage_error, not a deadlock. The first exception of the group's tasks is
// rethrown by wait() (once); the other tasks still run.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/spawn.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/ext/wait.hpp>
#include <strata/runtime/ext/task.hpp>

namespace strata {

class runtime;

namespace detail {
// Runs the task frame t on worker w: the callable, its completion, the
// frame's return to its pool (defined below).
void run_task(worker& w, task* t) noexcept;
void execute_task(worker& w, task* t) noexcept;  // run_task without the fairness poll
// Reports a finished task to its group (defined below).
void complete_task(worker& w, task_group* g, completion how) noexcept;
}  // namespace detail

class task_group {
 public:
  // Inside a task: binds to the current worker's runtime. Outside a worker:
  // usage_error (use task_group{rt}).
  task_group();
  explicit task_group(runtime& rt);
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;
  // Waits for pending tasks; an exception not collected by wait() is
  // reported on stderr (a destructor cannot throw).
  ~task_group();

  template <class F>
  void run(F&& f);
  void wait();
  bool done() const noexcept;

 private:
  friend void detail::execute_task(detail::worker&, detail::task*) noexcept;
  friend void detail::complete_task(detail::worker&, task_group*, detail::completion) noexcept;
  void record_exception(std::exception_ptr e) noexcept;
  void bind_outside();
  void destroy_pending() noexcept;
  void wait_slow(detail::worker* w);
  void wait_owner(detail::worker* w);
  void rethrow_if_failed();

  detail::runtime_core* m_rt = nullptr;
  detail::worker* m_owner = nullptr;  // worker that created the group, or nullptr
  // Written by the owner only (plain increments and decrements, release
  // store on completion), read by any waiter.
  std::atomic<std::uint64_t> m_owner_outstanding{0};
  // Read-modify-written by other workers (stolen completions, foreign spawns/completions).
  // Not padded away from the owner's counters: a group lives on its owner's
  // stack, is written by thieves only when they finish stolen tasks, and a
  // small object keeps the fork-join frame small.
  std::atomic<std::uint64_t> m_stolen_finished{0};
  std::atomic<std::int64_t> m_foreign_pending{0};
  // The first exception of the group's tasks, boxed on the heap by the task
  // that threw it: CAS from nullptr (acq_rel) by failing tasks, exchange
  // (acquire) by wait(). One word, so a group that never fails initialises
  // and checks a single pointer.
  std::atomic<std::exception_ptr*> m_error{nullptr};
};

inline task_group::task_group() {
  detail::worker* w = detail::current_worker();
  if (w == nullptr) {
    bind_outside();  // throws usage_error
    return;
  }
  m_rt = w->rt;
  m_owner = w;
}

inline task_group::~task_group() {
  if (!done() || m_error.load(std::memory_order_relaxed) != nullptr) destroy_pending();  // relaxed: done() ordered it
}

namespace detail {

// The out-of-line parts of running a task (src/run.cpp).
//
// A frame of another worker's pool: onto w's outgoing chain (frame_pool.hpp).
// Out of line, so that free_frame's local path stays small where it is
// inlined into every task's run.
void free_frame_away(worker& w, task* t) noexcept;
// An exception escaped a detached task on w: counted, reported once.
void report_detached_exception(worker& w, std::exception_ptr e) noexcept;
// Every k_injector_period-th task: serve the inbox, the node injector and
// the work sources even while the deque is busy.
void fairness_poll(worker& w) noexcept;

inline void free_frame(worker& w, task* t) noexcept {
  if (t->home == w.index) {
    w.pool.free_local(t);
  } else if (t->home == k_no_home) {
    delete t;
  } else if (t->home == k_embedded) {
    return;
  } else {
    free_frame_away(w, t);
  }
}

// The state of a parallel_invoke frame, at the start of its storage: the
// first callable, the exception it threw when a thief ran it (boxed, so that
// the state is trivially destructible and the inline join destroys
// nothing), and the flag the thief raises as its last access to the frame.
struct join_state {
  // 0 -> 1 by the worker that ran the stolen frame (release: publishes the
  // callable's effects and `error`); read by the owner (acquire) in wait_join.
  std::atomic<std::uint32_t> done{0};
  std::exception_ptr* error = nullptr;
  void* fn = nullptr;
};
static_assert(std::is_trivially_destructible_v<join_state>, "the inline join destroys nothing");
static_assert(sizeof(join_state) <= k_inline_bytes, "a join state fits a frame");

inline join_state& join_state_of(task* t) noexcept { return *std::launder(reinterpret_cast<join_state*>(t->storage)); }

inline void finish_join(task* t) noexcept {
  join_state_of(t).done.store(1, std::memory_order_release);  // release: pairs with the acquire in wait_join
}

// An inline join (the owner popped its own join frame and calls the
// callable directly): counted, and every k_injector_period-th polls the
// inbox and the injector (see worker::join_poll_at).
inline std::uint64_t count_inline_join(worker& w) noexcept {
  const std::uint64_t n = w.counters.joins_inline.get() + 1;
  w.counters.joins_inline.set(n);  // release: as every counter (see counter)
  return n;
}
inline void tick_inline_join(worker& w) noexcept {
  if (count_inline_join(w) >= w.join_poll_at) fairness_poll(w);
}

}  // namespace detail

inline bool task_group::done() const noexcept {
  // acquire loads: pair with the release stores/increments of completing
  // tasks. stolen_finished before outstanding (see the essay above).
  const auto stolen = m_stolen_finished.load(std::memory_order_acquire);
  if (m_owner_outstanding.load(std::memory_order_acquire) != stolen) return false;
  return m_foreign_pending.load(std::memory_order_acquire) == 0;
}

template <class F>
void task_group::run(F&& f) {
  detail::worker* w = detail::current_worker();
  if (w != nullptr && w == m_owner) {  // the fork-join fast path
    detail::task* t = detail::spawn_frame(*w);
    if constexpr (detail::k_boxed<F>) w->counters.boxed.add();
    detail::emplace_callable(t, std::forward<F>(f));
    t->group = this;
    t->how = detail::completion::group_owner;
    // single writer (the owner): a plain increment (relaxed: the task is not
    // visible to anyone before the push, and done() cannot turn true by it).
    m_owner_outstanding.store(m_owner_outstanding.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    detail::push_local(*w, t);
    return;
  }
  if (w != nullptr && w->rt == m_rt) {
    detail::task* t = detail::spawn_frame(*w);
    if constexpr (detail::k_boxed<F>) w->counters.boxed.add();
    detail::emplace_callable(t, std::forward<F>(f));
    t->group = this;
    t->how = detail::completion::group_foreign;  // another worker of the runtime
    m_foreign_pending.fetch_add(1, std::memory_order_relaxed);  // relaxed: the push publishes the task
    detail::push_local(*w, t);
    return;
  }
  detail::task* t = detail::external_frame(*m_rt);
  detail::emplace_callable(t, std::forward<F>(f));
  t->group = this;
  t->how = detail::completion::group_foreign;
  m_foreign_pending.fetch_add(1, std::memory_order_relaxed);  // relaxed: the submit publishes the task
  try {
    detail::submit_external(*m_rt, t);
  } catch (...) {
    m_foreign_pending.fetch_sub(1, std::memory_order_relaxed);  // relaxed: the task never existed
    throw;
  }
}

inline void task_group::wait() {
  detail::worker* w = detail::current_worker();
  if (w != nullptr && w == m_owner) {
    // Fast path: the child we pushed last sits on top of our private part.
    // While it does, the group cannot be done (the child is pending), so no
    // shared counter is read: pop it and run it here. Anything else (a
    // child stolen, a foreign task on top, a thief's request, the fairness
    // poll, an exception, a traced worker: run_task records the span) goes
    // to wait_owner.
    for (;;) {
      detail::task* t = w->deque.peek_private();
      if (t == nullptr || t->group != this || t->how != detail::completion::group_owner || w->deque.requested() ||
          --w->ticks_left <= 0 || w->trace != nullptr) {
        break;
      }
      w->deque.drop_private();
      task_group* const outer = w->running_group;
      w->running_group = this;
      try {
        t->run(t);
      } catch (...) {
        record_exception(std::current_exception());
      }
      w->running_group = outer;
      if (t->destroy != nullptr) t->destroy(t);
      w->pool.free_local(t);
      w->counters.executed.add();
      // single writer (the owner); release publishes the task's effects to other waiters.
      const std::uint64_t left = m_owner_outstanding.load(std::memory_order_relaxed) - 1;
      m_owner_outstanding.store(left, std::memory_order_release);
      if (left == 0) break;
    }
    if (!done() || m_error.load(std::memory_order_relaxed) != nullptr) wait_owner(w);  // relaxed: done() ordered it
    return;
  }
  wait_slow(w);
  rethrow_if_failed();
}

namespace detail {

// Completion of a finished task: the group's counters (task_group.hpp essay).
[[gnu::always_inline]] inline void complete_task(worker& w, task_group* g, completion how) noexcept {
  if (g == nullptr) return;
  if (how == completion::group_owner) {
    if (g->m_owner == &w) {
      // single writer (the owner): release publishes the task's effects to other waiters.
      g->m_owner_outstanding.store(g->m_owner_outstanding.load(std::memory_order_relaxed) - 1,
                                   std::memory_order_release);
      return;
    }
    // Stolen. release: publishes the task's effects (pairs with acquire in done()).
    // The group may be gone right after this increment: touch only the runtime.
    runtime_core* rt = w.rt;
    g->m_stolen_finished.fetch_add(1, std::memory_order_release);
    notify_external(rt->ext);
    return;
  }
  runtime_core* rt = w.rt;
  g->m_foreign_pending.fetch_sub(1, std::memory_order_release);  // release: as above
  notify_external(rt->ext);
}

// Runs t, reports its completion, frees its frame (execute_task); every
// k_injector_period-th task then polls the inbox, the injector and the work
// sources (fairness_poll). The poll
// comes after the task: a task taken from the inbox (an actor's install)
// must run before anything queued behind it there (its messages), and a
// completion must not wait behind whatever the poll runs.
[[gnu::always_inline]] inline void execute_task(worker& w, task* t) noexcept {
  task_group* const g = t->group;
  const completion how = t->how;  // read first: a join frame may be gone once it is done
  task_group* const outer = w.running_group;
  w.running_group = g;
  try {
    t->run(t);
  } catch (...) {
    if (g != nullptr) {
      g->record_exception(std::current_exception());
    } else {
      report_detached_exception(w, std::current_exception());
    }
  }
  w.running_group = outer;
  if (how == completion::join) {
    w.counters.joins_taken.add();  // not `executed`: join frames are outside wait_idle's sums
    finish_join(t);  // the last access to t: its owner may return at once
  } else {
    if (t->destroy != nullptr) t->destroy(t);
    free_frame(w, t);
    // After the callable's destructor: wait_idle (which compares the sums)
    // must not return while a capture is still being destroyed.
    w.counters.executed.add();
    complete_task(w, g, how);
  }
}

// run_task with a span in the worker's trace ring (STRATA_TRACE; run.cpp).
void run_task_traced(worker& w, task* t) noexcept;

[[gnu::always_inline]] inline void run_task(worker& w, task* t) noexcept {
  if (w.trace != nullptr) [[unlikely]] {  // the one branch tracing costs when off
    run_task_traced(w, t);
    return;
  }
  execute_task(w, t);
  if (--w.ticks_left <= 0) fairness_poll(w);
}

}  // namespace detail
}  // namespace strata
