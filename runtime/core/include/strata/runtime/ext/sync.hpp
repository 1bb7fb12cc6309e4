// Blocking for threads that are not workers: a futex-backed wait on a
// runtime-wide epoch. Workers never block here: they help instead.
//
// A waiter registers (ext_waiters, seq_cst), reads the epoch, re-checks its
// condition and sleeps on the epoch. A completer that may have satisfied an
// external condition changes its state, runs a seq_cst fence and, only if
// somebody waits, bumps the epoch and wakes all. Either the waiter sees the
// new state or the completer sees the waiter (Dekker); the epoch read before
// the re-check makes a late bump return the futex wait at once. Waits also
// time out after a millisecond, which covers conditions whose completions
// are plain (a group owner's own counters).
#pragma once

#include <atomic>
#include <cstdint>

#include <strata/config.hpp>

namespace strata::detail {

struct external_waiters {
  alignas(k_destructive_size) std::atomic<std::uint32_t> epoch{0};
  std::atomic<std::uint32_t> waiters{0};
};

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, long timeout_ns) noexcept;
void futex_wake(std::atomic<std::uint32_t>& word, int count) noexcept;

// Completer side: after the state change.
inline void notify_external(external_waiters& w) noexcept {
  // seq_cst fence: orders the caller's state change before the read of
  // waiters (pairs with the waiter's seq_cst increment in wait_external).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (w.waiters.load(std::memory_order_relaxed) != 0) {  // relaxed: ordered by the fence above
    w.epoch.fetch_add(1, std::memory_order_release);    // release: pairs with the waiter's epoch load
    futex_wake(w.epoch, 1 << 30);
  }
}

// Waiter side: blocks until done() holds.
template <class Done>
void wait_external(external_waiters& w, Done&& done) {
  if (done()) return;
  w.waiters.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: Dekker with notify_external
  for (;;) {
    const std::uint32_t e = w.epoch.load(std::memory_order_acquire);  // acquire: pairs with the bump
    if (done()) break;
    futex_wait(w.epoch, e, 1'000'000);
  }
  w.waiters.fetch_sub(1, std::memory_order_relaxed);  // relaxed: only a wake-up hint
}

}  // namespace strata::detail
