// Test support: the handshake of concurrent tests. A test that must see a
// state before it goes on (a task started, requests queued, a worker
// parked) waits for an observable condition, never a fixed sleep, and a
// condition that never comes fails the test within the deadline rather than
// hanging it:
//
//   ASSERT_TRUE(strata::test::eventually([&] { return started.load(); })) << "the task never started";
#pragma once

#include <chrono>
#include <thread>

namespace strata::test {

// Default deadline of a handshake: far above any honest wait, far below
// the test's ctest timeout.
inline constexpr std::chrono::seconds k_handshake_limit{10};

// Polls pred (yielding between polls) until it holds or `limit` passed;
// false on timeout.
template <class P>
bool eventually(P pred, std::chrono::steady_clock::duration limit = k_handshake_limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace strata::test
