// The runtime as users see it: submit, spawn, futures, task groups, loops,
// targets, errors, deterministic mode, statistics.
#include <gtest/gtest.h>
#include <strata/runtime/invoke.hpp>
#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "env_guard.hpp"
#include "json_reader.hpp"
#include "scale.hpp"
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

TEST(Runtime, SubmitReturnsValueFromAnyThread) {
  strata::runtime rt{workers(2)};
  EXPECT_EQ(rt.num_workers(), 2u);
  EXPECT_EQ(rt.submit([] { return 42; }).get(), 42);
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&, i] { ok += rt.submit([i] { return i * 2; }).get() == i * 2; });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 4);
  auto v = rt.submit([] {});
  v.get();
  EXPECT_THROW(v.get(), strata::usage_error) << "a future gives its value once";
}

TEST(Runtime, FibWithTaskGroups) {
  for (unsigned n : {1u, 2u, 3u}) {
    strata::runtime rt{workers(n)};
    EXPECT_EQ(rt.submit([] { return fib(25); }).get(), 75025);
    rt.wait_idle();
    const auto s = rt.stats();
    // fib(25) runs 2*fib(26)-1 calls; every call but the leaves spawns one task.
    std::uint64_t executed = s.total_executed();
    EXPECT_EQ(executed, 121393u) << "tasks: one per internal call (fib(26) - 1), plus the submitted root";
  }
}

TEST(Runtime, FutureCarriesException) {
  strata::runtime rt{workers(2)};
  auto f = rt.submit([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_THROW(f.get(), std::runtime_error);
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1) << "the runtime keeps working";
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

TEST(Runtime, ParallelForCoversEveryIndexOnce) {
  strata::runtime rt{workers(2)};
  const std::size_t n = 1'000'003;
  std::vector<std::atomic<std::uint8_t>> hits(n);
  strata::parallel_for(rt, 0, n, [&](std::size_t i) { hits[i].fetch_add(1, std::memory_order_relaxed); });
  std::size_t bad = 0;
  for (auto& h : hits) bad += h.load() != 1;
  EXPECT_EQ(bad, 0u);
  std::atomic<std::size_t> sum{0};
  strata::parallel_for(rt, 10, 20, 3, [&](std::size_t lo, std::size_t hi) {
    EXPECT_LE(hi - lo, 3u);
    for (auto i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 145u);
  strata::parallel_for(rt, 5, 5, [&](std::size_t) { ADD_FAILURE() << "empty range"; });
}

TEST(Runtime, NumaStaticMapsChunksToTheSameWorkers) {
  strata::runtime rt{workers(3)};
  const std::size_t n = 999;
  std::vector<unsigned> owner1(n), owner2(n);
  strata::parallel_for(rt, 0, n, 10, [&](std::size_t lo, std::size_t hi) {
    for (auto i = lo; i < hi; ++i) owner1[i] = strata::this_worker()->value;
  }, strata::partition::numa_static);
  strata::parallel_for(rt, 0, n, 7, [&](std::size_t lo, std::size_t hi) {
    for (auto i = lo; i < hi; ++i) owner2[i] = strata::this_worker()->value;
  }, strata::partition::numa_static);
  EXPECT_EQ(owner1, owner2);
  EXPECT_EQ(owner1[0], 0u);
  EXPECT_EQ(owner1[n / 2], 1u);
  EXPECT_EQ(owner1[n - 1], 2u);
}

TEST(Runtime, ParallelReduce) {
  strata::runtime rt{workers(2)};
  const std::size_t n = 10'000'000;
  const double s = strata::parallel_reduce(
      rt, 0, n, 0.0,
      [](std::size_t lo, std::size_t hi, double acc) {
        for (auto i = lo; i < hi; ++i) acc += static_cast<double>(i);
        return acc;
      },
      [](double a, double b) { return a + b; });
  EXPECT_DOUBLE_EQ(s, static_cast<double>(n) * (n - 1) / 2);
  EXPECT_EQ(strata::parallel_reduce(rt, 3, 3, 5, [](std::size_t, std::size_t, int a) { return a; },
                                    [](int a, int b) { return a + b; }),
            5);
}

TEST(Runtime, WaitingOnOwnGroupIsAnError) {
  strata::runtime rt{workers(2)};
  auto f = rt.submit([] {
    strata::task_group g;
    std::atomic<bool> caught{false};
    g.run([&] {
      try {
        g.wait();
      } catch (const strata::usage_error&) {
        caught = true;
      }
    });
    g.wait();
    return caught.load();
  });
  EXPECT_TRUE(f.get());
  EXPECT_THROW(rt.submit([&rt] { rt.wait_idle(); }).get(), strata::usage_error);
  EXPECT_THROW(strata::task_group{}, strata::usage_error) << "no runtime outside a task";
}

// wait_idle returns only after a finished task's callable is destroyed (its
// captures' destructors may touch what the caller frees next).
TEST(Runtime, WaitIdleWaitsForTheCallablesDestructor) {
  strata::runtime rt{workers(2)};
  static std::atomic<int> destroyed{0};
  struct slow_capture {
    bool live = true;
    slow_capture() = default;
    slow_capture(slow_capture&& o) noexcept : live(o.live) { o.live = false; }
    ~slow_capture() {
      if (!live) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      destroyed.fetch_add(1);
    }
  };
  int early = 0;
  for (int round = 0; round < 10; ++round) {
    destroyed = 0;
    rt.spawn([c = slow_capture{}] { (void)c; });
    rt.wait_idle();
    early += destroyed.load() != 1;
  }
  EXPECT_EQ(early, 0) << "rounds where wait_idle returned before the capture was destroyed";
}

TEST(Runtime, TaskGroupFromOutside) {
  strata::runtime rt{workers(2)};
  std::atomic<int> n{0};
  strata::task_group g{rt};
  for (int i = 0; i < 1000; ++i) g.run([&] { n.fetch_add(1); });
  g.wait();
  EXPECT_EQ(n.load(), 1000);
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

}  // namespace

namespace {

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

namespace {

TEST(Runtime, LoopExceptionsReachTheCaller) {
  strata::runtime rt{workers(3)};
  std::atomic<int> chunks{0};
  EXPECT_THROW(strata::parallel_for(rt, 0, 300, 10,
                                    [&](std::size_t lo, std::size_t) {
                                      chunks++;
                                      if (lo == 0) throw std::runtime_error("first chunk fails");
                                    },
                                    strata::partition::numa_static),
               std::runtime_error);
  EXPECT_EQ(chunks.load(), 21) << "worker 0 stops at its failing first piece; the 2 x 10 pieces of the others all ran";
  EXPECT_THROW(strata::parallel_for(rt, 0, 1000, 10,
                                    [](std::size_t lo, std::size_t) {
                                      if (lo == 500) throw std::runtime_error("one piece fails");
                                    }),
               std::runtime_error);
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1);
}

}  // namespace
