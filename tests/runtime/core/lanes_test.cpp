// External lanes (runtime/core/src/lanes.hpp): submissions from threads
// outside the workers go through a lane of the thread's own, are counted
// exactly once, survive the thread, are reused by later threads, fall back
// to the injector past the lane limit, and leave no memory behind. Under
// pinned_mpsc and hybrid there are no lanes: the same submissions go round
// robin to the workers' inboxes, and the tests count them there.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include <strata/numa_alloc/memory.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/task_group.hpp>

#include "runtime_config.hpp"

namespace {

using strata::test::workers;

std::uint64_t lane_tasks(const strata::runtime_stats& s) {
  std::uint64_t n = 0;
  for (const auto& w : s.workers) n += w.counter("lane_tasks");
  return n;
}

// Where the tasks from outside were taken: from the lanes under
// tiered_stealing; under pinned_mpsc and hybrid, which have no lanes, from
// the inboxes they were sent to round robin (hybrid: or its spill queue).
std::uint64_t taken_from_outside(const strata::runtime_stats& s) {
  if (strata::test::steals()) return lane_tasks(s);
  EXPECT_EQ(lane_tasks(s), 0u) << "no lanes under " << s.policy;
  std::uint64_t n = 0;
  for (const auto& w : s.workers) n += w.inbox_tasks + w.injector_tasks;
  return n;
}

TEST(Lanes, SpawnsFromMainRunOnceAndAreTakenFromTheLane) {
  for (unsigned n : {1u, 2u, 3u}) {
    strata::runtime rt(workers(n));
    constexpr int k = 100000;
    std::atomic<int> ran{0};
    for (int i = 0; i < k; ++i) rt.spawn([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
    rt.wait_idle();
    EXPECT_EQ(ran.load(), k) << n << " workers";
    const auto s = rt.stats();
    EXPECT_EQ(s.external_submits, static_cast<std::uint64_t>(k));
    EXPECT_EQ(taken_from_outside(s), static_cast<std::uint64_t>(k)) << "every task left through the lane";
    EXPECT_EQ(s.total_executed(), static_cast<std::uint64_t>(k));
  }
}

TEST(Lanes, FuturesAndGroupsFromOutsideUseTheLaneToo) {
  strata::runtime rt(workers(2));
  std::vector<strata::future<int>> fs;
  for (int i = 0; i < 1000; ++i) fs.push_back(rt.submit([i] { return i; }));
  long sum = 0;
  for (auto& f : fs) sum += f.get();
  EXPECT_EQ(sum, 999L * 1000 / 2);
  strata::task_group g(rt);
  std::atomic<int> ran{0};
  for (int i = 0; i < 1000; ++i) g.run([&ran] { ran.fetch_add(1); });
  g.wait();
  EXPECT_EQ(ran.load(), 1000);
  EXPECT_EQ(taken_from_outside(rt.stats()), 2000u);
}

// Tasks pushed by a thread that exits before they run are not lost, and
// threads that come later take over lanes: 300 threads one after another
// (more than the runtime has lanes) all submit through one.
TEST(Lanes, ThreadsComeAndGoAndTheirTasksStillRun) {
  strata::runtime rt(workers(2));
  std::atomic<int> ran{0};
  std::atomic<bool> gate{false};
  for (int t = 0; t < 300; ++t) {
    const bool first = t == 0;
    std::thread([&rt, &ran, &gate, first] {
      for (int i = 0; i < 100; ++i) {
        rt.spawn([&ran, &gate, first] {
          while (first && !gate.load()) std::this_thread::yield();  // the first batch outlives its thread
          ran.fetch_add(1);
        });
      }
    }).join();
    if (t == 0) gate.store(true);
  }
  rt.wait_idle();
  EXPECT_EQ(ran.load(), 300 * 100);
  EXPECT_EQ(taken_from_outside(rt.stats()), 300u * 100u) << "every thread found a lane (reused)";
}

// More threads at once than the runtime has lanes: the rest submit through
// the injector, still exactly once.
TEST(Lanes, MoreConcurrentThreadsThanLanesFallBackToTheInjector) {
  strata::runtime rt(workers(2));
  constexpr int threads = 80;
  constexpr int each = 500;
  std::atomic<int> ran{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      rt.spawn([&ran] { ran.fetch_add(1); });  // takes a lane (or finds none) while all threads live
      ready.fetch_add(1);
      while (ready.load() < threads) std::this_thread::yield();
      for (int i = 1; i < each; ++i) rt.spawn([&ran] { ran.fetch_add(1); });
    });
  }
  for (auto& t : ts) t.join();
  rt.wait_idle();
  EXPECT_EQ(ran.load(), threads * each);
  const auto s = rt.stats();
  EXPECT_EQ(s.external_submits, static_cast<std::uint64_t>(threads * each));
  if (!strata::test::steals()) {
    EXPECT_EQ(taken_from_outside(s), static_cast<std::uint64_t>(threads * each)) << "sent round robin, no lanes";
    return;
  }
  const std::uint64_t via_lanes = lane_tasks(s);
  EXPECT_LT(via_lanes, static_cast<std::uint64_t>(threads * each)) << "some threads had no lane";
  EXPECT_GE(via_lanes, 64u * each) << "64 lanes were used";
}

// A thread that outlives its runtime and submits to the next one: the old
// claim is dropped, the new runtime's lane taken, and all lane memory goes
// back with each runtime.
TEST(Lanes, ARuntimeGivesItsLanesMemoryBackAndTheThreadMovesOn) {
  const auto before = strata::numa_stats().total_in_use();
  for (int round = 0; round < 20; ++round) {
    strata::runtime rt(workers(1));
    std::atomic<int> ran{0};
    for (int i = 0; i < 5000; ++i) rt.spawn([&ran] { ran.fetch_add(1); });
    rt.wait_idle();
    ASSERT_EQ(ran.load(), 5000);
    ASSERT_EQ(taken_from_outside(rt.stats()), 5000u) << "round " << round;
  }
  EXPECT_EQ(strata::numa_stats().total_in_use(), before) << "lane deques and frame slabs are freed with the runtime";
}

TEST(Lanes, ASubmissionAfterShutdownIsRefusedAndItsFrameReturned) {
  strata::runtime rt(workers(1));
  rt.spawn([] {});  // takes the lane
  rt.shutdown();
  std::atomic<int> destroyed{0};
  struct counted {
    std::atomic<int>* d;
    explicit counted(std::atomic<int>* p) : d(p) {}
    counted(const counted& o) : d(o.d) {}
    ~counted() { d->fetch_add(1); }
    void operator()() const {}
  };
  EXPECT_THROW(rt.spawn(counted(&destroyed)), strata::runtime_error);
  EXPECT_GE(destroyed.load(), 2) << "the argument and the frame's copy are destroyed";
  EXPECT_EQ(rt.stats().external_submits, 1u);
}

}  // namespace
