// parallel_invoke: results, task counts, stolen joins, exceptions on every
// path (inline, stolen, from the second callable, from both), and misuse.
#include <gtest/gtest.h>
#include <strata/runtime/invoke.hpp>
#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "eventually.hpp"
#include "param_name.hpp"
#include "runtime_config.hpp"

namespace {

using strata::test::workers;
using namespace std::chrono_literals;

long fib(int n) {
  if (n < 2) return n;
  long x = 0;
  long y = 0;
  strata::parallel_invoke([&] { x = fib(n - 1); }, [&] { y = fib(n - 2); });
  return x + y;
}

class InvokeWorkers : public ::testing::TestWithParam<unsigned> {};

TEST_P(InvokeWorkers, FibGivesTheRightValueAndCountsOneTaskPerJoin) {
  const unsigned n = GetParam();
  strata::runtime rt{workers(n)};
  EXPECT_EQ(rt.submit([] { return fib(25); }).get(), 75025);
  rt.wait_idle();
  // fib(25) has fib(26) - 1 = 121392 internal calls, each one join frame,
  // plus the submitted root: whether a frame was joined inline or stolen,
  // it counts once.
  const strata::runtime_stats s = rt.stats();
  EXPECT_EQ(s.total_executed(), 121393u) << n << " workers";
  // Each join frame is pushed once, on its caller's worker (the root came
  // from outside: an external submit, not a push).
  std::uint64_t spawned = 0;
  for (const auto& w : s.workers) spawned += w.tasks_spawned;
  EXPECT_EQ(spawned, 121392u) << n << " workers";
  // Run it again: every figure doubles (the second root included).
  EXPECT_EQ(rt.submit([] { return fib(25); }).get(), 75025);
  rt.wait_idle();
  const strata::runtime_stats t = rt.stats();
  std::uint64_t spawned_twice = 0;
  for (const auto& w : t.workers) spawned_twice += w.tasks_spawned;
  EXPECT_EQ(t.total_executed(), 2u * 121393u) << n << " workers";
  EXPECT_EQ(spawned_twice, 2u * 121392u) << n << " workers";
}

// A throwing second callable: the first still runs and is joined, and the
// second's exception leaves, on one worker (the first runs inline) and on
// two (it may be stolen).
TEST_P(InvokeWorkers, AThrowingSecondCallableStillRunsAndJoinsTheFirst) {
  const unsigned n = GetParam();
  strata::runtime rt{workers(n)};
  std::atomic<int> first_runs{0};
  auto f = rt.submit([&] {
    strata::parallel_invoke([&] { first_runs.fetch_add(1); }, [] { throw std::logic_error("second"); });
  });
  EXPECT_THROW(f.get(), std::logic_error);
  EXPECT_EQ(first_runs.load(), 1) << n << " workers";
  // Both throw: the second's (the caller's own) exception leaves.
  auto g = rt.submit([] {
    strata::parallel_invoke([] { throw std::runtime_error("first"); }, [] { throw std::logic_error("second"); });
  });
  EXPECT_THROW(g.get(), std::logic_error) << n << " workers";
}

INSTANTIATE_TEST_SUITE_P(Workers, InvokeWorkers, ::testing::Values(1u, 2u, 3u), strata::test::workers_name{});

// Inline joins are tasks for the fairness poll too: a single worker deep in a
// recursion that never leaves its private deque still serves its inbox
// every k_injector_period joins, so a task sent to it runs during the
// recursion, not after it.
TEST(ParallelInvoke, ARecursionOfInlineJoinsStillServesTheInbox) {
  strata::runtime rt{workers(1)};
  std::atomic<bool> started{false};
  std::atomic<bool> submitted{false};
  std::atomic<bool> served{false};
  // Rounds of fib(18) (4180 inline joins each) the root ran after the
  // inbox task was submitted and before it saw it served: a poll every 61
  // joins serves it in the first round; without polls it would wait for
  // the whole loop (at most 10^4 rounds, or 30 s).
  constexpr int k_max_rounds = 10000;
  auto root = rt.submit([&] {
    started.store(true, std::memory_order_release);  // release: the test thread then submits
    const auto until = std::chrono::steady_clock::now() + 30s;
    int after = 0;
    while (!served.load(std::memory_order_acquire) && after < k_max_rounds &&
           std::chrono::steady_clock::now() < until) {
      const bool was_submitted = submitted.load(std::memory_order_acquire);
      EXPECT_EQ(fib(18), 2584);
      if (was_submitted) ++after;
    }
    return after;
  });
  while (!started.load(std::memory_order_acquire)) std::this_thread::yield();
  auto inbox_task = rt.submit_on(strata::worker_id{0}, [&] { served.store(true, std::memory_order_release); });
  submitted.store(true, std::memory_order_release);  // release: pairs with the root's acquire
  const int after = root.get();
  EXPECT_LE(after, 100) << "rounds of fib(18) between the inbox task's submission and its run";
  EXPECT_TRUE(served.load()) << "after " << after << " rounds";
  inbox_task.get();
}

// A binary tree of 2^depth leaves; each leaf marks its own slot and spins a
// little, so that the second worker steals frames.
void tree(std::atomic<int>* hits, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) {
    hits[lo].fetch_add(1, std::memory_order_relaxed);
    const auto until = std::chrono::steady_clock::now() + 2us;
    while (std::chrono::steady_clock::now() < until) {
    }
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  strata::parallel_invoke([=] { tree(hits, mid, hi); }, [=] { tree(hits, lo, mid); });
}

TEST(ParallelInvoke, StolenFramesRunExactlyOnce) {
  strata::runtime rt{workers(2)};
  constexpr std::size_t k_leaves = 1 << 14;
  auto hits = std::make_unique<std::atomic<int>[]>(k_leaves);
  for (int round = 0; round < 4; ++round) {
    rt.submit([&] { tree(hits.get(), 0, k_leaves); }).get();
  }
  for (std::size_t i = 0; i < k_leaves; ++i) ASSERT_EQ(hits[i].load(), 4) << "leaf " << i;
  if (!strata::test::steals()) {
    EXPECT_EQ(rt.stats().total_stolen(), 0u) << "no steals under " << rt.stats().policy;
    return;
  }
  EXPECT_GT(rt.stats().total_stolen(), 0u) << "the second worker stole join frames";
}

TEST(ParallelInvoke, AnExceptionOfTheFirstCallableRunInlineReachesTheCaller) {
  strata::runtime rt{workers(1)};
  bool second_ran = false;
  auto f = rt.submit([&] {
    strata::parallel_invoke([] { throw std::runtime_error("first"); }, [&] { second_ran = true; });
  });
  try {
    f.get();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "first");
  }
  EXPECT_TRUE(second_ran);
  EXPECT_EQ(rt.submit([] { return fib(10); }).get(), 55) << "the worker goes on";
}

TEST(ParallelInvoke, AStolenFirstCallablesExceptionIsRethrownAfterTheJoin) {
  strata::runtime rt{workers(2)};
  int stolen = 0;
  for (int attempt = 0; attempt < 20 && stolen == 0; ++attempt) {
    std::atomic<int> first_worker{-1};
    std::atomic<int> caller{-1};
    auto f = rt.submit([&] {
      caller = static_cast<int>(strata::this_worker()->value);
      strata::parallel_invoke(
          [&] {
            first_worker = static_cast<int>(strata::this_worker()->value);
            throw std::runtime_error("stolen first");
          },
          [&] {
            // Give the idle worker the time to steal the frame.
            const auto until = std::chrono::steady_clock::now() + 200ms;
            while (first_worker.load() < 0 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
          });
    });
    try {
      f.get();
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "stolen first");
    }
    ASSERT_GE(first_worker.load(), 0);
    if (!strata::test::steals()) {  // nobody steals: the caller joins inline, the exception still arrives
      EXPECT_EQ(first_worker.load(), caller.load());
      return;
    }
    if (first_worker.load() != caller.load()) ++stolen;  // the other worker ran it: stolen
  }
  EXPECT_GT(stolen, 0) << "in 20 attempts the second worker never stole the frame";
}

// A task of group g calls parallel_invoke; waiting on g from the first
// callable is the usage_error of waiting on your own group, whether the
// first callable runs inline or on a thief (a stolen one used to run
// outside g and hang). Stolen: the second callable keeps its worker busy
// until the first has run on the other worker (a handshake on a flag the
// first sets). The first callable's frame sits in the private part of the
// deque, which its owner shares when a thief asks, at its next spawn: so
// the second callable, like a task that spawns, spawns a no-op once the
// other worker asked (a handshake on the deque's request flag), and the
// thief steals the frame. (A sleep in the second callable, as before,
// shares nothing: the first callable then mostly ran inline after it.)
enum class first_callable { inline_after_the_second, stolen_while_the_second_waits };

struct join_case {
  first_callable how;
  const char* name;
  friend std::ostream& operator<<(std::ostream& os, const join_case& c) { return os << c.name; }
};

class WaitOnTheCallersGroup : public ::testing::TestWithParam<join_case> {};

TEST_P(WaitOnTheCallersGroup, FromTheFirstCallableIsAnError) {
  const bool stolen = GetParam().how == first_callable::stolen_while_the_second_waits;
  if (stolen && !strata::test::steals()) {
    GTEST_SKIP() << "pinned_mpsc and hybrid never steal a join frame: the inline case covers them";
  }
  strata::runtime rt{workers(2)};
  std::atomic<int> errors{0};
  std::atomic<bool> first_done{false}, second_saw_first{false};
  std::atomic<int> first_worker{-1}, second_worker{-1};
  rt.submit([&] {
      strata::task_group g;
      g.run([&] {
        strata::parallel_invoke(
            [&] {
              first_worker = static_cast<int>(strata::this_worker()->value);
              try {
                g.wait();
              } catch (const strata::usage_error&) {
                errors.fetch_add(1);
              }
              first_done.store(true);
            },
            [&] {
              second_worker = static_cast<int>(strata::this_worker()->value);
              if (!stolen) return;
              const auto& mine = strata::detail::current_worker()->deque;
              (void)strata::test::eventually([&] { return first_done.load() || mine.requested(); });
              if (!first_done.load()) rt.spawn([] {});  // shares the private part: the frame, the oldest
              second_saw_first = strata::test::eventually([&] { return first_done.load(); });
            });
      });
      g.wait();
    }).get();
  rt.wait_idle();
  EXPECT_EQ(errors.load(), 1) << GetParam();
  if (stolen) {
    EXPECT_TRUE(second_saw_first.load()) << "no worker stole the first callable while the second waited";
    EXPECT_NE(first_worker.load(), second_worker.load()) << "the first callable was not stolen";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Joins, WaitOnTheCallersGroup,
    ::testing::Values(join_case{first_callable::inline_after_the_second, "inline"},
                      join_case{first_callable::stolen_while_the_second_waits, "stolen"}),
    strata::test::row_name{});

TEST(ParallelInvoke, OutsideAWorkerIsAUsageError) {
  try {
    strata::parallel_invoke([] {}, [] {});
    FAIL() << "no error";
  } catch (const strata::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("outside a task"), std::string::npos) << e.what();
  }
}

}  // namespace
