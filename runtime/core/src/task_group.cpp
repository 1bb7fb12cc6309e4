// task_group: the parts off the fork-join fast path.
#include <cstdio>
#include <new>
#include <utility>

#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

namespace strata {

namespace {

// The box used when boxing a task's exception itself failed: it holds a
// std::bad_alloc and is never freed.
std::exception_ptr* out_of_memory_error() noexcept {
  static std::exception_ptr box = std::make_exception_ptr(std::bad_alloc());
  return &box;
}

void free_error(std::exception_ptr* box) noexcept {
  if (box != out_of_memory_error()) delete box;
}

}  // namespace

void task_group::bind_outside() {
  throw usage_error(
      "strata::task_group constructed outside a task: no runtime to bind to; use strata::task_group g{rt}");
}

task_group::task_group(runtime& rt) : m_rt(&rt.core()) {
  detail::worker* w = detail::current_worker();
  if (w != nullptr && w->rt == m_rt) m_owner = w;
}

void task_group::destroy_pending() noexcept {
  if (done()) {
    // acquire: pairs with the CAS in record_exception.
    if (std::exception_ptr* box = m_error.exchange(nullptr, std::memory_order_acquire)) {
      std::fprintf(stderr, "strata: a task_group was destroyed with an exception nobody collected with wait()\n");
      free_error(box);
    }
    return;
  }
  try {
    wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: a task_group destroyed without wait() had a failing task: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "strata: a task_group destroyed without wait() had a failing task\n");
  }
}

void task_group::record_exception(std::exception_ptr e) noexcept {
  if (m_error.load(std::memory_order_relaxed) != nullptr) return;  // relaxed: only a hint that we lost already
  std::exception_ptr* box = new (std::nothrow) std::exception_ptr(std::move(e));
  if (box == nullptr) box = out_of_memory_error();
  std::exception_ptr* expected = nullptr;
  // acq_rel: publishes the box's contents to wait()'s acquire exchange.
  if (!m_error.compare_exchange_strong(expected, box, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    free_error(box);
  }
}

void task_group::rethrow_if_failed() {
  // acquire: pairs with the CAS in record_exception.
  std::exception_ptr* box = m_error.exchange(nullptr, std::memory_order_acquire);
  if (box == nullptr) return;
  std::exception_ptr e = *box;
  free_error(box);
  if (e) std::rethrow_exception(e);
}

// The owner's join after the inline fast path stopped: pop while our own
// children are on top (serving thieves' requests and the fairness poll in
// between), run whatever else is on top, and help elsewhere once the deque
// is empty.
void task_group::wait_owner(detail::worker* w) {
  detail::task* t;
  while (!done()) {
    if (!w->deque.pop(t)) {
      wait_slow(w);
      break;
    }
    // A thief asked for work: share part of what is left before running
    // (a join that only pops would keep every remaining child private).
    if (w->deque.requested()) detail::publish_and_wake(*w);
    detail::run_task(*w, t);
  }
  rethrow_if_failed();
}

void task_group::wait_slow(detail::worker* w) {
  if (w != nullptr && w->rt == m_rt) {
    if (w->running_group == this) {
      throw usage_error(
          "strata::task_group::wait called from a task of the same group: it would wait for itself (deadlock)");
    }
    detail::help_until(*w, [](const void* g) { return static_cast<const task_group*>(g)->done(); }, this);
    return;
  }
  detail::wait_outside_workers(*m_rt, [this] { return done(); });
}

}  // namespace strata
