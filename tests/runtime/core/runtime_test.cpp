// The runtime object: targets (this_worker, submit_on), wait_idle and the
// callables it waits for, detached exceptions, shutdown, placement and the
// statistics JSON, deterministic mode, the placement display, boxed
// callables. Futures, task groups, loops and parking have files of their
// own (future_test, task_group_test, loop_test, parking_test).
#include <gtest/gtest.h>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "json_reader.hpp"
#include "runtime_config.hpp"

namespace {

using strata::test::workers;

long fib(int n) {
  if (n < 2) return n;
  long x = 0;
  strata::task_group g;
  g.run([&x, n] { x = fib(n - 1); });
  const long y = fib(n - 2);
  g.wait();
  return x + y;
}

TEST(Runtime, ThisWorkerAndSubmitOn) {
  strata::runtime rt{workers(2)};
  EXPECT_FALSE(strata::this_worker().has_value());
  for (unsigned w = 0; w < 2; ++w) {
    for (int i = 0; i < 100; ++i) {
      const auto id = rt.submit_on(strata::worker_id{w}, [] { return strata::this_worker()->value; }).get();
      ASSERT_EQ(id, w) << "submit_on runs on its target";
    }
  }
  EXPECT_THROW((void)rt.submit_on(strata::worker_id{2}, [] {}), strata::usage_error);
  EXPECT_EQ(rt.submit_on(strata::numa_node{0}, [] { return 7; }).get(), 7);
  EXPECT_THROW((void)rt.submit_on(strata::numa_node{5}, [] {}), strata::usage_error);
}

TEST(Runtime, WaitIdleInsideATaskIsAnError) {
  strata::runtime rt{workers(2)};
  EXPECT_THROW(rt.submit([&rt] { rt.wait_idle(); }).get(), strata::usage_error);
}

// wait_idle returns only after a finished task's callable is destroyed (its
// captures' destructors may touch what the caller frees next). wait_idle
// waits until every task is counted executed, and a task is counted only
// after its callable was destroyed: the capture's destructor reads the
// counts wait_idle reads and must not find its own task among them (so no
// sleep in the destructor is needed to give an early wait_idle its chance).
TEST(Runtime, WaitIdleWaitsForTheCallablesDestructor) {
  strata::runtime rt{workers(2)};
  static std::atomic<int> destroyed{0};
  static std::atomic<std::uint64_t> executed_at_destruction{0};
  static const strata::detail::runtime_core* core = nullptr;
  core = &rt.core();
  struct observed_capture {
    bool live = true;
    observed_capture() = default;
    observed_capture(observed_capture&& o) noexcept : live(o.live) { o.live = false; }
    ~observed_capture() {
      if (!live) return;
      std::uint64_t executed = 0;
      for (const auto& w : core->workers) executed += w->counters.executed.get();
      executed_at_destruction.store(executed);
      destroyed.fetch_add(1);
    }
  };
  int early = 0, counted_early = 0;
  for (int round = 0; round < 10; ++round) {
    destroyed = 0;
    rt.spawn([c = observed_capture{}] { (void)c; });
    rt.wait_idle();
    early += destroyed.load() != 1;
    // Before this round's task: the tasks of the rounds before.
    counted_early += executed_at_destruction.load() != static_cast<std::uint64_t>(round);
  }
  EXPECT_EQ(early, 0) << "rounds where wait_idle returned before the capture was destroyed";
  EXPECT_EQ(counted_early, 0) << "rounds where the task was counted executed (so wait_idle could return) "
                                 "while its capture was not destroyed yet";
  EXPECT_EQ(rt.stats().total_executed(), 10u);
  core = nullptr;
}

TEST(Runtime, DetachedExceptionIsCounted) {
  strata::runtime rt{workers(1)};
  rt.spawn([] { throw std::runtime_error("detached boom (expected in this test)"); });
  rt.wait_idle();
  EXPECT_EQ(rt.stats().workers[0].detached_exceptions, 1u);
  EXPECT_EQ(rt.submit([] { return 3; }).get(), 3);
}

TEST(Runtime, ShutdownRejectsSubmissions) {
  strata::runtime rt{workers(2)};
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) rt.spawn([&] { ran++; });
  rt.shutdown();
  EXPECT_EQ(ran.load(), 100) << "shutdown runs everything already spawned";
  EXPECT_THROW(rt.spawn([] {}), strata::runtime_error);
  EXPECT_THROW((void)rt.submit([] { return 1; }), strata::runtime_error);
  rt.shutdown();  // idempotent
}

TEST(Runtime, PlacementAndStatsJson) {
  strata::config c = workers(4);
  c.topology = strata::topology::synthetic("pack:2 numa:1 core:2 pu:1");
  c.bind = strata::bind_policy::close;
  strata::runtime rt{c};
  EXPECT_FALSE(rt.pinned()) << "a synthetic machine is never bound";
  ASSERT_EQ(rt.placement().size(), 4u);
  EXPECT_EQ(rt.placement()[2].package, 1);
  EXPECT_EQ(rt.steal_tiers(strata::worker_id{0}).size(), 2u);
  EXPECT_THROW((void)rt.steal_tiers(strata::worker_id{4}), strata::usage_error);
  (void)rt.submit([] { return fib(18); }).get();
  rt.wait_idle();
  const auto j = strata::test::json_reader::parse(rt.stats().to_json());
  ASSERT_EQ(j["workers"].size(), 4u);
  for (const char* k : {"tasks_executed", "steals_by_tier", "steal_attempts", "steal_failures", "parks", "wakeups",
                        "inbox_depth", "deque_high_water", "busy_s", "idle_s"}) {
    EXPECT_TRUE(j["workers"][0].has(k)) << k;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(j["total_executed"].num), 4181u);
}

TEST(Runtime, DeterministicModeGivesTheSameTrace) {
  auto trace = [] {
    strata::config c;
    c.deterministic_seed = 42;
    strata::runtime rt{c};
    EXPECT_EQ(rt.num_workers(), 1u);
    std::vector<int> order;
    std::function<void(int, int)> tree = [&](int id, int depth) {
      order.push_back(id);
      if (depth == 0) return;
      strata::task_group g;
      for (int k = 0; k < 3; ++k) g.run([&tree, id, k, depth] { tree(id * 3 + k + 1, depth - 1); });
      g.wait();
    };
    rt.submit([&] { tree(0, 6); }).get();
    for (int i = 0; i < 50; ++i) rt.spawn([&order, i] { order.push_back(-i); });
    rt.wait_idle();
    return order;
  };
  const auto a = trace();
  EXPECT_EQ(a.size(), 1093u + 50u);
  for (int run = 0; run < 5; ++run) EXPECT_EQ(trace(), a);
}

TEST(Runtime, DisplayAffinityPrintsThePlacement) {
  strata::config c = workers(2);
  c.display_affinity = true;
  testing::internal::CaptureStderr();
  { strata::runtime rt{c}; }
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("strata placement: 2 worker(s)"), std::string::npos) << err;
}

TEST(Runtime, LargeCallablesAreBoxedAndCounted) {
  strata::runtime rt{workers(1)};
  std::array<char, 512> big{};
  big[100] = 7;
  const int got = rt.submit([] {
                      int sum = 0;
                      std::array<char, 512> inner{};
                      inner[3] = 5;
                      strata::task_group g;
                      g.run([inner, &sum] { sum = inner[3]; });  // 512 bytes: does not fit a frame
                      g.wait();
                      return sum;
                    }).get();
  EXPECT_EQ(got, 5);
  EXPECT_EQ(rt.submit([big] { return big[100]; }).get(), 7);  // boxed from outside: heap frame anyway
  rt.wait_idle();
  EXPECT_EQ(rt.stats().workers[0].boxed_tasks, 1u);
}

}  // namespace
