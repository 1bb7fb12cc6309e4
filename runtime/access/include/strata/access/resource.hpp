// Tasks that declare what they read and write: lock mode.
//
//   strata::resource a = rt.make_resource(), b = rt.make_resource();
//   rt.submit_with_access({strata::read(a), strata::write(b)}, fn);              // lock mode
//   rt.submit_with_access({strata::write(b)}, fn, strata::priority{10});
//   rt.spawn_with_access({strata::write(a), strata::write(b)}, fn);           // detached
//   rt.release_resource(b);   // once its tasks finished: make_resource reuses its state
//
// Lock mode: each resource is one 32-bit atomic word (ext/lock_word.hpp:
// write bit, reader count, holder worker, ticket of a waiting writer). A
// task runs only after it holds every lock it asked for, taken all or none
// (each try fails without waiting and gives back what it took, so no access
// pattern can deadlock). Blocked tasks wait in priority queues (priority,
// then age), one per resource: the queue of the resource whose lock refused
// them, under one dispatcher mutex.
//
// The dispatcher is a role, not a thread. A submission is a plain spawn (no
// lock taken, no mutex): its task frame carries the sorted lock list (up to
// 4) and the body (ext/access_task.hpp); the worker that runs it tries its
// locks, all or none, and runs it. One refused then moves its body out of
// the frame into a heap request (access_request) and goes to the
// dispatcher's queues (under the mutex), as does one whose list or body
// does not fit a frame, and one with a priority or from outside the
// workers whose locks look busy at submission (queue_at_submission says why
// only those look). The worker that releases locks re-evaluates the queues
// of the resources it released; a task refused by another resource moves
// to that resource's queue (redistribution); a task that gets its locks
// goes on the releasing worker's deque, which just had the resources in its
// cache (thieves take it when that worker is busy).
//
// Why no dedicated dispatcher thread: on a node where every core runs a
// worker it would take a core or add a wake-up (microseconds) to every
// blocked task; with the role, an uncontended task costs a spawn and its
// CAS pair. Why locks are taken when the task runs, not at submission: a
// task that held its locks while it waited in a deque would make every
// later task on those resources conflict. Why queues per resource rather
// than per holder worker: with few workers a holder's queue holds about
// all blocked tasks, and re-scanning it on every release is quadratic; a
// resource's queue is scanned until the first task that resource still
// refuses while write-locked (a few while read-locked).
//
// Fairness: a writer that is blocked by readers registers its ticket in the
// word; from then on new readers may overtake it at most
// config::reader_front_runs times, then they wait too. The counter resets
// when a writer gets the lock. The 128th concurrent reader waits rather
// than overflow the 7-bit count.
//
// Lock mode is a module on the core's seams (target strata::access): its
// state is a subsystem of the runtime (counted by wait_idle, its counters
// in stats()). This header defines the runtime's lock-mode members.
#pragma once

#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata/access/ext/access_task.hpp>
#include <strata/access/handles.hpp>
#include <strata/runtime/future.hpp>
#include <strata/runtime/runtime.hpp>

namespace strata {

template <class F>
auto runtime::submit_with_access(std::initializer_list<access> list, F&& f)
    -> future<std::invoke_result_t<std::decay_t<F>&>> {
  return submit_access(list.begin(), list.size(), std::forward<F>(f), 0);
}
template <class F>
auto runtime::submit_with_access(std::initializer_list<access> list, F&& f, priority p)
    -> future<std::invoke_result_t<std::decay_t<F>&>> {
  return submit_access(list.begin(), list.size(), std::forward<F>(f), p.value);
}
template <class F>
auto runtime::submit_with_access(const std::vector<access>& list, F&& f)
    -> future<std::invoke_result_t<std::decay_t<F>&>> {
  return submit_access(list.data(), list.size(), std::forward<F>(f), 0);
}
template <class F>
auto runtime::submit_with_access(const std::vector<access>& list, F&& f, priority p)
    -> future<std::invoke_result_t<std::decay_t<F>&>> {
  return submit_access(list.data(), list.size(), std::forward<F>(f), p.value);
}
template <class F>
void runtime::spawn_with_access(std::initializer_list<access> list, F&& f) {
  spawn_access(list.begin(), list.size(), std::forward<F>(f), 0);
}
template <class F>
void runtime::spawn_with_access(std::initializer_list<access> list, F&& f, priority p) {
  spawn_access(list.begin(), list.size(), std::forward<F>(f), p.value);
}
template <class F>
void runtime::spawn_with_access(const std::vector<access>& list, F&& f) {
  spawn_access(list.data(), list.size(), std::forward<F>(f), 0);
}
template <class F>
void runtime::spawn_with_access(const std::vector<access>& list, F&& f, priority p) {
  spawn_access(list.data(), list.size(), std::forward<F>(f), p.value);
}

template <class F>
auto runtime::submit_access(const access* list, std::size_t n, F&& f, int prio)
    -> future<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  auto st = std::make_shared<detail::future_state<R>>(m_core.get());
  start_with_access(list, n, detail::access_body_future<R, std::decay_t<F>>{std::forward<F>(f), st}, prio);
  return future<R>(std::move(st));
}

template <class F>
void runtime::spawn_access(const access* list, std::size_t n, F&& f, int prio) {
  start_with_access(list, n, detail::access_body_detached<std::decay_t<F>>{std::forward<F>(f)}, prio);
}

// A short list and a small body travel in a task frame: validated here,
// spawned like any task, locks taken by the worker that runs it
// (access_task). Otherwise, or when a lock looks held against it, a heap
// request goes to the dispatcher (dispatch.cpp).
template <class B>
void runtime::start_with_access(const access* list, std::size_t n, B&& body, int prio) {
  using D = std::decay_t<B>;
  if constexpr (detail::k_access_in_frame<D>) {
    if (n <= detail::access_head::k_locks) {
      detail::access_task<D> t{{}, std::move(body)};
      detail::prepare_locks(*m_core, list, n, t.head.locks, D::api);
      t.head.n = static_cast<std::uint32_t>(n);
      t.head.prio = prio;
      if (!detail::queue_at_submission(*m_core, t.head.locks, n, prio)) {
        spawn(std::move(t));
      } else {
        start_access_request(list, n, std::move(t.body), prio);
      }
      return;
    }
  }
  start_access_request(list, n, std::move(body), prio);
}

template <class D>
void runtime::start_access_request(const access* list, std::size_t n, D&& body, int prio) {
  auto* req = detail::access_request_of<D>::create(std::move(body), prio);
  try {
    detail::prepare_access(*m_core, *req, list, n, D::api);
  } catch (...) {
    req->drop(req);
    throw;
  }
  detail::start_access(*m_core, req);
}

}  // namespace strata
