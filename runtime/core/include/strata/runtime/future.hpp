// future<T>: the result of runtime::submit.
//
//   auto f = rt.submit([] { return 42; });
//   int v = f.get();   // on a worker: runs other tasks while waiting;
//                      // elsewhere: sleeps on the future's own futex word
//                      // (engine::external with no worker hosted: ticks)
//
// get() returns the value once (moves it out) or rethrows the task's
// exception; a second get() is a usage_error.
//
// Memory ordering: the task's effects happen-before get() returns (the
// release exchange of `ready` pairs with the acquire loads in ready() and
// wait_outside()).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/wait.hpp>

namespace strata {

namespace detail {

template <class T>
struct future_state {
  using value_type = std::conditional_t<std::is_void_v<T>, char, T>;
  explicit future_state(runtime_core* r) : rt(r) {}
  runtime_core* rt;
  // 0 pending, 1 ready, 2 pending while a thread outside the workers sleeps
  // on it (futex). RMW by the task (exchange to 1) and by such a waiter
  // (CAS 0 -> 2); acquire loads by readers.
  std::atomic<std::uint32_t> ready{0};
  std::optional<value_type> value;
  std::exception_ptr error;
  bool taken = false;

  // Runs fn and keeps its result or its exception (not yet visible: finish() publishes).
  template <class F>
  void fill(F& fn) noexcept {
    try {
      if constexpr (std::is_void_v<T>) {
        fn();
        value.emplace('\0');
      } else {
        value.emplace(fn());
      }
    } catch (...) {
      error = std::current_exception();
    }
  }

  // Makes the result visible; wakes a thread outside the workers only if one
  // sleeps on this very future (no wake-up, no fence per task otherwise).
  void finish() noexcept {
    // release: publishes value/error (pairs with the acquire loads in
    // is_ready and wait_outside); the exchange is ordered with the
    // waiter's CAS on the same word, so a sleeper is always seen.
    if (ready.exchange(1, std::memory_order_release) == 2) futex_wake(ready, 1 << 30);
  }
  // acquire: pairs with the release exchange in finish().
  bool is_ready() const noexcept { return ready.load(std::memory_order_acquire) == 1; }
  // Blocks a thread outside the workers until finish().
  void wait_outside() noexcept {
    for (;;) {
      std::uint32_t v = ready.load(std::memory_order_acquire);  // acquire: as is_ready
      if (v == 1) return;
      // acquire: a failure may have read the 1 that finish() released.
      if (v == 0 && !ready.compare_exchange_weak(v, 2, std::memory_order_acquire, std::memory_order_acquire)) continue;
      futex_wait(ready, 2, 100'000'000);
    }
  }
};

// The callable a submit puts in a frame: runs f, fills the state.
template <class T, class F>
struct future_task {
  std::shared_ptr<future_state<T>> state;
  F fn;
  void operator()() {
    state->fill(fn);
    state->finish();
  }
};

}  // namespace detail

template <class T>
class future {
 public:
  future() = default;
  explicit future(std::shared_ptr<detail::future_state<T>> s) : m_state(std::move(s)) {}

  bool valid() const noexcept { return m_state != nullptr; }
  bool ready() const noexcept { return m_state && m_state->is_ready(); }

  void wait() const {
    if (!m_state) throw usage_error("strata::future::wait on an empty future");
    auto* st = m_state.get();
    if (st->is_ready()) return;
    detail::worker* w = detail::current_worker();
    if (w != nullptr && w->rt == st->rt) {
      detail::help_until(*w, [](const void* p) { return static_cast<const detail::future_state<T>*>(p)->is_ready(); },
                         st);
      return;
    }
    while (st->rt->external_engine && !st->is_ready()) {
      if (!detail::drive_inline(*st->rt)) break;  // hosted workers run it: block below
    }
    st->wait_outside();
  }

  T get() {
    wait();
    auto& st = *m_state;
    if (st.taken) throw usage_error("strata::future::get called twice");
    st.taken = true;
    if (st.error) std::rethrow_exception(st.error);
    if constexpr (std::is_void_v<T>) {
      return;
    } else {
      return std::move(*st.value);
    }
  }

 private:
  std::shared_ptr<detail::future_state<T>> m_state;
};

}  // namespace strata
