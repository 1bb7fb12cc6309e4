// Parking and waking (parking.cpp): idle workers park, and work handed to
// a parked runtime wakes a worker that runs it, whichever way it comes: the
// injector, a worker's inbox from outside or from another worker, a deque
// that a thief must steal from. Every round waits until the workers have
// parked (a handshake on their park and wake-up counts, not a sleep), so
// every submission meets sleeping workers; a lost wake-up leaves its task
// unrun and fails the round at its deadline.
#include <gtest/gtest.h>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/runtime.hpp>

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "eventually.hpp"
#include "param_name.hpp"
#include "parked.hpp"
#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using strata::test::all_parked;
using strata::test::eventually;
using strata::test::workers;

// How the work reaches the parked runtime.
enum class handoff {
  submit_from_outside,      // the injector: any worker may run it
  submit_on_from_outside,   // worker 1's inbox, pushed by the test thread
  submit_on_from_a_worker,  // worker 1's inbox, pushed by a task on worker 0
  spawn_on_a_worker,        // worker 0's deque, while its task waits: worker 1 steals it
                            // (pinned_mpsc, hybrid: it stays on worker 0, worker 1 sleeps on)
};

struct wake_case {
  handoff how;
  const char* name;
  friend std::ostream& operator<<(std::ostream& os, const wake_case& c) { return os << c.name; }
};

class ParkedRuntime : public ::testing::TestWithParam<wake_case> {};

std::uint64_t wakeups_of(strata::runtime& rt, unsigned i) { return rt.core().workers[i]->counters.wakeups.get(); }

TEST_P(ParkedRuntime, WorkHandedToItIsRunByAWokenWorker) {
  strata::runtime rt{workers(2)};
  const handoff how = GetParam().how;
  // Without stealing, a spawn on worker 0 goes home: worker 0 runs it once
  // its spawner returned, and worker 1 is not woken for it.
  const bool stays_home = how == handoff::spawn_on_a_worker && !strata::test::steals();
  const unsigned target = stays_home ? 0 : 1;
  const std::uint64_t rounds = strata::test::scaled(200);
  constexpr int k_nobody = -1;
  std::atomic<int> ran_on{k_nobody};
  std::uint64_t on_target = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    ASSERT_TRUE(eventually([&] { return all_parked(rt); })) << "round " << r << ": the idle workers never parked";
    const std::uint64_t any_before = wakeups_of(rt, 0) + wakeups_of(rt, 1);
    const std::uint64_t target_before = wakeups_of(rt, target);
    const std::uint64_t other_before = wakeups_of(rt, 1 - target);
    ran_on.store(k_nobody);
    auto record = [&ran_on] { ran_on.store(static_cast<int>(strata::this_worker()->value)); };
    switch (how) {
      case handoff::submit_from_outside:
        rt.spawn(record);
        break;
      case handoff::submit_on_from_outside:
        (void)rt.submit_on(strata::worker_id{1}, record);
        break;
      case handoff::submit_on_from_a_worker:
        (void)rt.submit_on(strata::worker_id{0}, [&rt, record] { (void)rt.submit_on(strata::worker_id{1}, record); });
        break;
      case handoff::spawn_on_a_worker:
        (void)rt.submit_on(strata::worker_id{0}, [&rt, &ran_on, record, stays_home] {
          rt.spawn(record);
          if (stays_home) return;
          // Keeps worker 0 busy until a thief took the task (bounded: a lost
          // wake-up runs it here after the deadline, and the round fails).
          (void)eventually([&] { return ran_on.load() != k_nobody; });
        });
        break;
    }
    ASSERT_TRUE(eventually([&] { return ran_on.load() != k_nobody; }))
        << "round " << r << ": the task never ran: a lost wake-up";
    if (how == handoff::submit_from_outside) {
      EXPECT_GT(wakeups_of(rt, 0) + wakeups_of(rt, 1), any_before) << "round " << r << ": nobody woke";
    } else {
      EXPECT_GT(wakeups_of(rt, target), target_before) << "round " << r << ": worker " << target
                                                        << " ran it without waking";
    }
    if (stays_home) {
      rt.wait_idle();
      EXPECT_EQ(wakeups_of(rt, 1), other_before) << "round " << r << ": worker 1 was woken for work it cannot take";
    }
    on_target += ran_on.load() == static_cast<int>(target);
    rt.wait_idle();
  }
  if (how != handoff::submit_from_outside) {
    EXPECT_EQ(on_target, rounds) << "rounds whose task ran on worker " << target << ", its target (or its thief)";
  }
  rt.shutdown();
  const auto s = rt.stats();
  for (const auto& w : s.workers) {
    EXPECT_GE(w.parks, 1u) << "worker " << w.worker;
    EXPECT_EQ(w.wakeups, w.parks) << "worker " << w.worker << ": every park ends in one wake-up";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Handoffs, ParkedRuntime,
    ::testing::Values(wake_case{handoff::submit_from_outside, "submit_from_outside"},
                      wake_case{handoff::submit_on_from_outside, "submit_on_from_outside"},
                      wake_case{handoff::submit_on_from_a_worker, "submit_on_from_a_worker"},
                      wake_case{handoff::spawn_on_a_worker, "spawn_on_a_worker"}),
    strata::test::row_name{});

}  // namespace
