// Scheduling policies (runtime/core/src/policy.cpp): validated settings,
// round-robin placement from outside, no steals, and the seed's trade-off:
// with one worker held by a long task, pinned_mpsc strands the work sent to
// it while hybrid's spill queue lets the free worker take the overflow.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <strata/runtime/error.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/task_group.hpp>

#include "env_guard.hpp"
#include "eventually.hpp"
#include "runtime_config.hpp"

namespace {

using strata::test::eventually;

strata::config with_policy(strata::policy p, unsigned workers) {
  strata::config c = strata::test::workers(workers);
  c.policy = p;
  return c;
}

std::string error_of(const char* name, const char* value) {
  strata::test::env_guard g;
  g.set(name, value);
  try {
    (void)strata::runtime_config::from_env();
  } catch (const strata::config_error& e) {
    return e.what();
  }
  return "";
}

TEST(Policy, SettingsAreValidatedAndNamed) {
  EXPECT_NE(error_of("STRATA_POLICY", "stealing").find("accepted: tiered_stealing, pinned_mpsc, hybrid"),
            std::string::npos);
  for (const char* bad : {"0", "-1", "x", "16k", "2000000"}) {
    const std::string e = error_of("STRATA_HYBRID_BOUND", bad);
    EXPECT_NE(e.find("STRATA_HYBRID_BOUND='" + std::string(bad) + "' is invalid; accepted: 1 to 1048576"),
              std::string::npos)
        << bad << ": " << e;
  }
  strata::test::env_guard g;
  g.set("STRATA_POLICY", "hybrid").set("STRATA_HYBRID_BOUND", "64");
  const auto c = strata::runtime_config::from_env();
  EXPECT_EQ(c.policy, strata::policy::hybrid);
  EXPECT_EQ(c.hybrid_bound, 64u);
  strata::config zero = with_policy(strata::policy::hybrid, 1);
  zero.hybrid_bound = 0;
  EXPECT_THROW(strata::runtime{zero}, strata::config_error);
  strata::config bogus = with_policy(static_cast<strata::policy>(7), 1);
  EXPECT_THROW(strata::runtime{bogus}, strata::config_error);
}

// One submitting thread, two workers: exactly every other task on each,
// taken from its inbox; nobody steals; stats() names the policy.
TEST(Policy, PinnedMpscPlacesSubmissionsRoundRobin) {
  strata::runtime rt{with_policy(strata::policy::pinned_mpsc, 2)};
  std::atomic<int> ran{0};
  for (int i = 0; i < 4000; ++i) rt.spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
  rt.wait_idle();
  EXPECT_EQ(ran.load(), 4000);
  const auto s = rt.stats();
  EXPECT_EQ(s.policy, "pinned_mpsc");
  EXPECT_NE(s.to_json().find("\"policy\":\"pinned_mpsc\""), std::string::npos);
  for (const auto& w : s.workers) {
    EXPECT_EQ(w.inbox_tasks, 2000u) << "worker " << w.worker;
    EXPECT_EQ(w.tasks_executed, 2000u) << "worker " << w.worker;
    EXPECT_EQ(w.steal_attempts, 0u) << "worker " << w.worker;
    EXPECT_EQ(w.injector_tasks, 0u) << "worker " << w.worker;
  }
}

// Worker 0 held by a task that waits for a release; 1000 tasks submitted
// from outside afterwards, round robin from worker 1.
struct held_worker_run {
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  explicit held_worker_run(strata::runtime& rt) {
    std::atomic<bool> holding{false};
    rt.spawn([this, &holding] {  // the first submission: worker 0
      holding.store(true);
      while (!release.load()) std::this_thread::yield();
    });
    while (!holding.load()) std::this_thread::yield();
    for (int i = 0; i < 1000; ++i) rt.spawn([this] { ran.fetch_add(1); });
  }
  ~held_worker_run() { release.store(true); }
};

TEST(Policy, PinnedMpscStrandsWorkSentToABusyWorker) {
  strata::runtime rt{with_policy(strata::policy::pinned_mpsc, 2)};
  held_worker_run run(rt);
  ASSERT_TRUE(eventually([&] { return run.ran.load() == 500; })) << "ran " << run.ran.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(run.ran.load(), 500) << "worker 1 ran work sent to worker 0";
  run.release.store(true);
  rt.wait_idle();
  EXPECT_EQ(run.ran.load(), 1000);
}

TEST(Policy, HybridSpillsBeyondTheBoundAndTheFreeWorkerTakesIt) {
  strata::config c = with_policy(strata::policy::hybrid, 2);
  c.hybrid_bound = 16;
  strata::runtime rt{c};
  held_worker_run run(rt);
  // At most the bound waits in worker 0's inbox; the rest spilled.
  ASSERT_TRUE(eventually([&] { return run.ran.load() >= 1000 - 16; })) << "ran " << run.ran.load();
  const auto held = rt.stats();
  EXPECT_GE(held.external_spills, 500u - 16u);
  EXPECT_LE(held.workers[0].inbox_depth, 16u);
  run.release.store(true);
  rt.wait_idle();
  EXPECT_EQ(run.ran.load(), 1000);
  const auto s = rt.stats();
  EXPECT_EQ(s.total_stolen(), 0u);
  EXPECT_EQ(s.workers[1].injector_tasks + s.workers[0].injector_tasks, s.external_spills);
}

// hybrid: a fork-join tree spawned on one worker spills beyond the bound and
// both workers run it; every task exactly once.
TEST(Policy, HybridSharesASpawnedTreeThroughTheSpillQueue) {
  strata::runtime rt{with_policy(strata::policy::hybrid, 2)};
  std::atomic<int> leaves{0};
  rt.submit_on(strata::worker_id{0}, [&] {
      strata::task_group g;
      for (int i = 0; i < 20000; ++i) g.run([&leaves] { leaves.fetch_add(1, std::memory_order_relaxed); });
      g.wait();
    }).get();
  rt.wait_idle();
  EXPECT_EQ(leaves.load(), 20000);
  const auto s = rt.stats();
  EXPECT_GT(s.workers[0].counter("spilled_tasks"), 0u);
  EXPECT_EQ(s.total_executed(), 20001u);
  EXPECT_EQ(s.total_stolen(), 0u);
}

// hybrid: an idle worker parks after its local spin (it does not spin
// searching the spill queue), and a spill wakes it to take the overflow.
TEST(Policy, HybridParksIdleWorkersAndASpillWakesOne) {
  strata::config c = with_policy(strata::policy::hybrid, 2);
  c.hybrid_bound = 4;
  strata::runtime rt{c};
  ASSERT_TRUE(eventually([&] { return rt.stats().workers[1].parks >= 1; })) << "worker 1 never parked";
  const auto before = rt.stats().workers[1];
  std::atomic<int> ran{0}, on_1{0};
  rt.submit_on(strata::worker_id{0}, [&] {
      strata::task_group g;
      for (int i = 0; i < 64; ++i) {
        g.run([&] {
          const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
          while (std::chrono::steady_clock::now() < until) {
          }
          if (strata::this_worker()->value == 1) on_1.fetch_add(1);
          ran.fetch_add(1);
        });
      }
      g.wait();
    }).get();
  rt.wait_idle();
  EXPECT_EQ(ran.load(), 64);
  const auto s = rt.stats();
  EXPECT_GT(on_1.load(), 0) << "the parked worker never took spilled work";
  EXPECT_GT(s.workers[1].wakeups, before.wakeups) << "no spill woke worker 1";
  EXPECT_EQ(s.workers[1].injector_tasks, static_cast<std::uint64_t>(on_1.load())) << "worker 1 ran only spills";
  EXPECT_EQ(s.total_stolen(), 0u);
}

}  // namespace
