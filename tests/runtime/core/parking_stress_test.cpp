// Parking stress: ping-pong with a thread outside and between two workers,
// round after round, every round within a second; now and then the
// workers are let park first (a handshake on their park counts), so that
// submissions meet sleeping workers as well as spinning ones.
#include <gtest/gtest.h>
#include <strata/runtime/runtime.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>

#include "eventually.hpp"
#include "param_name.hpp"
#include "parked.hpp"
#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using namespace std::chrono_literals;
using strata::test::scaled;
using strata::test::workers;

// Ping-pong between a thread outside and the runtime, and between two
// workers: each round must finish within a second (a lost wake-up would
// hang a round until the watchdog fires).
class PingPong : public ::testing::TestWithParam<unsigned> {};

TEST_P(PingPong, NoLostWakeups) {
  strata::runtime rt{workers(GetParam())};
  const std::size_t rounds = scaled(100'000);
  std::atomic<std::size_t> slow_rounds{0};
  for (std::size_t i = 0; i < rounds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto f = rt.submit([i] { return i; });
    ASSERT_EQ(f.get(), i);
    if (std::chrono::steady_clock::now() - t0 > 1s) slow_rounds++;
    if (i % 1000 == 999) {  // the next submission meets parked workers
      ASSERT_TRUE(strata::test::eventually([&] { return strata::test::all_parked(rt); }))
          << "round " << i << ": the idle workers never parked";
    }
  }
  EXPECT_EQ(slow_rounds.load(), 0u);
  if (GetParam() < 2) return;
  // Worker 0 <-> worker 1 through their inboxes.
  std::atomic<std::size_t> bounced{0};
  const std::size_t worker_rounds = scaled(20'000);
  rt.submit_on(strata::worker_id{0}, [&] {
      for (std::size_t i = 0; i < worker_rounds; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        rt.submit_on(strata::worker_id{1}, [&] { bounced++; }).get();
        if (std::chrono::steady_clock::now() - t0 > 1s) slow_rounds++;
      }
    }).get();
  EXPECT_EQ(bounced.load(), worker_rounds);
  EXPECT_EQ(slow_rounds.load(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Workers, PingPong, ::testing::Values(1u, 2u), strata::test::workers_name{});

}  // namespace
