// parallel_invoke: the parts off the fast path (design in invoke.hpp).
#include <new>

#include <strata/runtime/error.hpp>
#include <strata/runtime/invoke.hpp>

namespace strata::detail {

namespace {

// The box used when boxing an exception itself failed: a std::bad_alloc,
// never freed.
std::exception_ptr* out_of_memory_box() noexcept {
  static std::exception_ptr box = std::make_exception_ptr(std::bad_alloc());
  return &box;
}

// Takes the boxed exception out of the frame's state (nullptr: none).
std::exception_ptr take_error(join_state& s) noexcept {
  std::exception_ptr* box = s.error;
  if (box == nullptr) return nullptr;
  s.error = nullptr;
  std::exception_ptr e = *box;
  if (box != out_of_memory_box()) delete box;
  return e;
}

// help_until's predicate: the join frame p is done.
bool join_done(const void* p) {
  // acquire: pairs with the release store in finish_join (the callable's
  // effects and the error box).
  return join_state_of(static_cast<task*>(const_cast<void*>(p))).done.load(std::memory_order_acquire) != 0;
}

}  // namespace

void invoke_outside() {
  throw usage_error(
      "strata::parallel_invoke called outside a task: it needs a worker's deque; submit a task that calls it, or "
      "use strata::task_group g{rt}");
}

void keep_join_error(join_state& s) noexcept {
  std::exception_ptr* box = new (std::nothrow) std::exception_ptr(std::current_exception());
  s.error = box != nullptr ? box : out_of_memory_box();
}

void wait_join(worker& w, task* t) {
  help_until(w, join_done, t);
  w.counters.joins_away.add();
  if (std::exception_ptr e = take_error(join_state_of(t))) std::rethrow_exception(e);
}

void join_after_throw(worker& w, task* t) noexcept {
  if (w.deque.peek_private() == t) {
    w.deque.drop_private();
    (void)count_inline_join(w);  // no poll here, inside a catch: the next join polls
    t->run(t);  // run_joined: boxes what the callable throws
  } else {
    help_until(w, join_done, t);
    w.counters.joins_away.add();
  }
  (void)take_error(join_state_of(t));  // the second callable's exception wins
}

}  // namespace strata::detail
