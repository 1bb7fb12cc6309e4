// task_group: fork-join on the workers and from outside, exact task
// counts, and waiting on your own group.
#include <gtest/gtest.h>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include <atomic>
#include <cstdint>

#include "param_name.hpp"
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

class TaskGroupWorkers : public ::testing::TestWithParam<unsigned> {};

TEST_P(TaskGroupWorkers, FibCountsOneTaskPerInternalCall) {
  strata::runtime rt{workers(GetParam())};
  EXPECT_EQ(rt.submit([] { return fib(25); }).get(), 75025);
  rt.wait_idle();
  const auto s = rt.stats();
  // fib(25) runs 2*fib(26)-1 calls; every call but the leaves spawns one task.
  std::uint64_t executed = s.total_executed();
  EXPECT_EQ(executed, 121393u) << "tasks: one per internal call (fib(26) - 1), plus the submitted root";
}

INSTANTIATE_TEST_SUITE_P(Workers, TaskGroupWorkers, ::testing::Values(1u, 2u, 3u), strata::test::workers_name{});

TEST(TaskGroup, WaitingOnOwnGroupIsAnError) {
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
  EXPECT_THROW(strata::task_group{}, strata::usage_error) << "no runtime outside a task";
}

TEST(TaskGroup, FromOutside) {
  strata::runtime rt{workers(2)};
  std::atomic<int> n{0};
  strata::task_group g{rt};
  for (int i = 0; i < 1000; ++i) g.run([&] { n.fetch_add(1); });
  g.wait();
  EXPECT_EQ(n.load(), 1000);
}

}  // namespace
