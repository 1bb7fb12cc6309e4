// Lock mode at scale: 64 resources x 10^6 tasks with 1 to 4
// random resources each, shadow counters inside every task.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

#include "eventually.hpp"
#include "lock_waiters.hpp"
#include "resource_exclusion.hpp"
#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using strata::test::submission;

TEST(LockModeStress, MillionTasksOver64ResourcesNeverConflict) { strata::test::exclusion_run(strata::test::scaled(1'000'000), 2); }

TEST(LockModeStress, MillionDetachedTasksOver64ResourcesNeverConflict) {
  strata::test::exclusion_run(strata::test::scaled(1'000'000), 2, submission::detached_in_frame);
}

class LockModeStressSubmissions : public ::testing::TestWithParam<submission> {};

TEST_P(LockModeStressSubmissions, FourWorkersOversubscribed) {
  strata::test::exclusion_run(strata::test::scaled(200'000), 4, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Submissions, LockModeStressSubmissions, strata::test::k_all_submissions,
                         strata::test::submission_name{});

// A body whose move throws on the workers: a refused frame cannot become a
// heap request (as if out of memory) and fails instead.
std::atomic<bool> g_move_throws{false};
struct throwing_move_body {
  throwing_move_body() = default;
  throwing_move_body(const throwing_move_body&) = default;
  throwing_move_body(throwing_move_body&&) {
    if (g_move_throws.load() && strata::this_worker().has_value()) throw std::bad_alloc();
  }
  void operator()() const {}
};

// A frame {write(a), write(b)} refused on b holds a for a moment; a release
// of a that re-evaluates meanwhile stops at a (write-locked). The refused
// frame that fails must look at a's queue again, or tasks wait on a free a
// until some later release (the window is a few nanoseconds, so it may take
// many rounds to hit). Rounds of 8 tasks on a while a thread keeps
// spawning such frames; every round must finish.
TEST(LockModeStress, ARefusedFrameThatCannotQueueLeavesNoTaskStuck) {
  static_assert(strata::detail::k_access_in_frame<strata::detail::access_body_detached<throwing_move_body>>);
  g_move_throws.store(true);
  {
    strata::runtime rt(strata::test::workers(3));
    auto a = rt.make_resource();  // id 1: held for a moment by the refused frames
    auto b = rt.make_resource();  // id 2: held, so the frames are refused
    auto c = rt.make_resource();
    std::atomic<bool> holding{false}, release{false};
    rt.spawn_with_access({strata::write(b), strata::write(c)}, [&] {
      holding.store(true);
      while (!release.load()) std::this_thread::yield();
    });
    struct let_go_on_exit {
      std::atomic<bool>& flag;
      ~let_go_on_exit() { flag.store(true); }
    } let_go{release};
    while (!holding.load()) std::this_thread::yield();
    // Past admission: later submissions are frames even while b is held.
    // The first 192 are queued at submission, the rest once a worker ran
    // them from the injector: wait until all 400 wait (a handshake).
    for (int i = 0; i < 400; ++i) rt.spawn_with_access({strata::write(c)}, [] {});
    ASSERT_TRUE(strata::test::eventually([&] { return strata::test::blocked_on(c) == 400; }))
        << "c's 400 requests never all reached the queues: " << strata::test::blocked_on(c);
    std::atomic<bool> stop{false};
    std::thread spammer([&] {
      while (!stop.load()) {
        rt.spawn_with_access({strata::write(a), strata::write(b)}, throwing_move_body{});
        for (int k = 0; k < 200; ++k) asm volatile("");  // keep the injector short
      }
    });
    const auto end_at = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    int rounds = 0;
    bool stuck = false;
    while (std::chrono::steady_clock::now() < end_at && !stuck) {
      ++rounds;
      std::vector<strata::future<void>> fs;
      for (int i = 0; i < 8; ++i) {
        fs.push_back(rt.submit_with_access({strata::write(a)}, [] {
          for (int k = 0; k < 2000; ++k) asm volatile("");
        }));
      }
      auto all_ready = [&] {
        for (auto& f : fs) {
          if (!f.ready()) return false;
        }
        return true;
      };
      // Slow is allowed (the spam competes for a), lost is not: after the
      // spam stops, a queue with a free resource drains at once.
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!all_ready() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!all_ready()) {
        stop.store(true);
        if (spammer.joinable()) spammer.join();
        until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!all_ready() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!all_ready()) {
        stuck = true;
        ADD_FAILURE() << "round " << rounds << ": tasks on a still queued 5 s after the last refused frame, a free";
        rt.submit_with_access({strata::write(a)}, [] {}).get();  // a release of a lets them through
      }
      for (auto& f : fs) f.get();
    }
    EXPECT_GT(rounds, 1);
    stop.store(true);
    if (spammer.joinable()) spammer.join();
    release.store(true);
    rt.wait_idle();
  }
  g_move_throws.store(false);
}

}  // namespace
