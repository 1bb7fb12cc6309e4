// Lock mode: exclusion, all-or-none, priority, bounded reader
// front-running, bank transfers, deterministic mode, bad use (dataflow
// mode is in dataflow_test).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

#include "eventually.hpp"
#include "lock_waiters.hpp"
#include "param_name.hpp"
#include "resource_exclusion.hpp"
#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using namespace std::chrono_literals;
using strata::test::blocked_on;
using strata::test::eventually;
using strata::test::queued_by_workers;

class LockModeSubmissions : public ::testing::TestWithParam<strata::test::submission> {};

TEST_P(LockModeSubmissions, ShadowCountersNeverSeeAConflict) {
  strata::test::exclusion_run(strata::test::scaled(100000), 2, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Submissions, LockModeSubmissions, strata::test::k_all_submissions,
                         strata::test::submission_name{});

TEST(LockMode, BankTransfersKeepTheTotal) {
  strata::runtime rt(strata::test::workers(2));
  constexpr int k_accounts = 256;
  std::vector<strata::resource> res;
  std::vector<long> balance(k_accounts, 1000);
  for (int i = 0; i < k_accounts; ++i) res.push_back(rt.make_resource());
  std::mt19937 rng(99);
  const std::size_t n = strata::test::scaled(100000);
  for (std::size_t t = 0; t < n; ++t) {
    const auto a = static_cast<std::size_t>(rng() % k_accounts);
    auto b = static_cast<std::size_t>(rng() % k_accounts);
    if (b == a) b = (b + 1) % k_accounts;
    const long amount = static_cast<long>(rng() % 50);
    rt.submit_with_access({strata::write(res[a]), strata::write(res[b])}, [&balance, a, b, amount] {
      balance[a] -= amount;
      balance[b] += amount;
    });
  }
  rt.wait_idle();
  long total = 0;
  for (long x : balance) total += x;
  EXPECT_EQ(total, 1000L * k_accounts);
}

// One task submits every transfer (as the bank benchmark does), a third of
// them through one hot account: the chains that build up behind it run in
// place on the releasing worker; all complete and the total is kept.
// Both ways: submit_with_access (this body is too large for a frame with a
// future: a heap request) and spawn_with_access (in the frame; a refused
// one moves to a heap request when it runs).
struct hot_account_case {
  unsigned workers;
  bool detached;
  const char* name;
  friend std::ostream& operator<<(std::ostream& os, const hot_account_case& c) { return os << c.name; }
};

class HotAccount : public ::testing::TestWithParam<hot_account_case> {};

TEST_P(HotAccount, OneSubmittingTaskCompletesEveryTransfer) {
  const unsigned workers = GetParam().workers;
  const bool detached = GetParam().detached;
  strata::runtime rt(strata::test::workers(workers));
  constexpr int k_accounts = 512;
  std::vector<strata::resource> res;
  for (int i = 0; i < k_accounts; ++i) res.push_back(rt.make_resource());
  std::vector<long> balance(k_accounts, 1000);
  std::atomic<std::size_t> ran{0};
  const std::size_t n = strata::test::scaled(200000);
  rt.submit([&] {
     std::mt19937 rng(7);
     for (std::size_t t = 0; t < n; ++t) {
       const auto a = t % 3 == 0 ? std::size_t{0} : static_cast<std::size_t>(rng() % k_accounts);
       auto b = static_cast<std::size_t>(rng() % k_accounts);
       if (b == a) b = (b + 1) % k_accounts;
       auto transfer = [&balance, &ran, a, b] {
         balance[a] -= 3;
         balance[b] += 3;
         ran.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after wait_idle
       };
       if (detached) {
         rt.spawn_with_access({strata::write(res[a]), strata::write(res[b])}, transfer);
       } else {
         rt.submit_with_access({strata::write(res[a]), strata::write(res[b])}, transfer);
       }
     }
   }).get();
  rt.wait_idle();
  EXPECT_EQ(ran.load(), n) << workers << " workers, detached " << detached;
  long total = 0;
  for (long x : balance) total += x;
  EXPECT_EQ(total, 1000L * k_accounts) << workers << " workers, detached " << detached;
}

INSTANTIATE_TEST_SUITE_P(Submissions, HotAccount,
                         ::testing::Values(hot_account_case{1, false, "submit_with_access_1_worker"},
                                           hot_account_case{2, false, "submit_with_access_2_workers"},
                                           hot_account_case{1, true, "spawn_with_access_1_worker"},
                                           hot_account_case{2, true, "spawn_with_access_2_workers"}),
                         strata::test::row_name{});

// A lock-mode task that holds write(a) and submits many tasks, one of which
// waits for a: a submission must never run that waiter nested inside the
// holder (it would wait forever for a lock its own caller holds), however
// long the backlog of submissions grows.
class LockModeWorkers : public ::testing::TestWithParam<unsigned> {};

TEST_P(LockModeWorkers, ASubmissionNeverRunsAWaiterInsideTheLockHolder) {
  const unsigned workers = GetParam();
  strata::runtime rt(strata::test::workers(workers));
  auto a = rt.make_resource();
  auto b = rt.make_resource();
  std::atomic<bool> done{false};
  auto holder = rt.submit_with_access({strata::write(a)}, [&] {
    for (int i = 0; i < 1100; ++i) rt.submit_with_access({strata::read(b)}, [] {});
    rt.spawn([&] { rt.submit_with_access({strata::write(a)}, [] {}).get(); });
    for (int i = 0; i < 1100; ++i) rt.submit_with_access({strata::read(b)}, [] {});
    done.store(true);
  });
  ASSERT_TRUE(eventually([&] { return done.load(); }))
      << "the holder of a is stuck under a task that waits for a (" << workers << " workers)";
  holder.get();
  rt.wait_idle();
}

INSTANTIATE_TEST_SUITE_P(Workers, LockModeWorkers, ::testing::Values(1u, 2u), strata::test::workers_name{});

// A task that throws gives its locks back, in a frame and as a heap request
// (its locks free when it runs; refused ones below): a future gets the
// exception, a detached task is counted in stats; the next writer runs.
TEST(LockMode, AThrowingTaskReleasesItsLocksInAFrameAndOnTheHeap) {
  strata::runtime rt(strata::test::workers(2));
  auto a = rt.make_resource();
  auto b = rt.make_resource();
  auto fail = [] { throw std::runtime_error("transfer refused"); };
  EXPECT_THROW(rt.submit_with_access({strata::write(a), strata::read(b)}, fail).get(), std::runtime_error);
  auto large_fail = [pad = std::array<char, 96>{}] {
    if (pad[0] == 0) throw std::runtime_error("large transfer refused");
  };
  EXPECT_THROW(rt.submit_with_access({strata::write(a)}, large_fail).get(), std::runtime_error);
  rt.spawn_with_access({strata::write(a), strata::write(b)}, fail);
  rt.spawn_with_access({strata::write(b)}, large_fail);
  rt.wait_idle();
  std::uint64_t detached = 0;
  for (const auto& w : rt.stats().workers) detached += w.detached_exceptions;
  EXPECT_EQ(detached, 2u);
  EXPECT_EQ(rt.submit_with_access({strata::write(a), strata::write(b)}, [] { return 7; }).get(), 7) << "locks were kept";
}

// Holds write(r) and write(c) until `release`, then fills c's queue past
// the dispatcher's admission (64 per worker), so that later submissions
// on r are plain frames even though r is held: they are refused when they
// run and move to heap requests (block_frame). The first 128 are queued at
// submission, the rest reach the queues from the injector when a worker
// runs them: `past` says all 300 wait (a handshake on c's blocked count).
// Let go at the latest when it goes out of scope (before the runtime), so
// that a failed assertion does not leave the runtime's teardown waiting.
struct held_past_admission {
  static constexpr std::uint32_t k_queued = 300;
  std::atomic<bool> release{false}, holding{false};
  std::atomic<unsigned> held_on{0};  // the worker running the holder
  bool past = false;
  held_past_admission(strata::runtime& rt, strata::resource r, strata::resource c) {
    rt.spawn_with_access({strata::write(r), strata::write(c)}, [this] {
      held_on.store(strata::this_worker()->value);
      holding.store(true);
      while (!release.load()) std::this_thread::yield();
    });
    while (!holding.load()) std::this_thread::yield();
    for (std::uint32_t i = 0; i < k_queued; ++i) {
      strata::test::submit_off(rt, held_on.load(), [&] { rt.spawn_with_access({strata::write(c)}, [] {}); });
    }
    past = eventually([&] { return blocked_on(c) == k_queued; });
  }
  ~held_past_admission() { release.store(true); }
};

TEST(LockMode, AThrowingTaskRefusedWhenItRanReleasesItsLocks) {
  strata::runtime rt(strata::test::workers(2));
  auto a = rt.make_resource();
  auto c = rt.make_resource();
  held_past_admission held(rt, a, c);
  ASSERT_TRUE(held.past) << "c's 300 requests never all reached the queues: " << blocked_on(c);
  const std::uint64_t queued_before = queued_by_workers(rt);
  auto fail = [] { throw std::runtime_error("transfer refused"); };
  auto f = strata::test::submit_off(rt, held.held_on, [&] { return rt.submit_with_access({strata::write(a)}, fail); });
  strata::test::submit_off(rt, held.held_on, [&] { rt.spawn_with_access({strata::write(a)}, fail); });
  ASSERT_TRUE(eventually([&] { return blocked_on(a) == 2; })) << "the two tasks on a never waited: " << blocked_on(a);
  EXPECT_EQ(queued_by_workers(rt) - queued_before, 2u) << "both were plain frames, refused when they ran";
  held.release.store(true);
  EXPECT_THROW(f.get(), std::runtime_error);
  rt.wait_idle();
  std::uint64_t detached = 0;
  for (const auto& w : rt.stats().workers) detached += w.detached_exceptions;
  EXPECT_EQ(detached, 1u);
  EXPECT_EQ(rt.submit_with_access({strata::write(a), strata::write(c)}, [] { return 7; }).get(), 7) << "locks were kept";
}

TEST(LockMode, WaitIdleWaitsForDetachedTasksRefusedWhenTheyRan) {
  strata::runtime rt(strata::test::workers(2));
  auto r = rt.make_resource();
  auto c = rt.make_resource();
  held_past_admission held(rt, r, c);
  ASSERT_TRUE(held.past) << "c's 300 requests never all reached the queues: " << blocked_on(c);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    strata::test::submit_off(rt, held.held_on, [&] {
      rt.spawn_with_access({strata::read(r)}, [&] { ran.fetch_add(1); });
    });
  }
  ASSERT_TRUE(eventually([&] { return blocked_on(r) == 100; })) << "refused and queued: " << blocked_on(r);
  ASSERT_EQ(ran.load(), 0);
  // The release comes while wait_idle waits: after the test thread says it
  // enters wait_idle, and a window in which wait_idle must keep waiting
  // (no event says it is inside; the window is what is tested).
  std::atomic<bool> waiting{false};
  std::thread releaser([&] {
    (void)eventually([&] { return waiting.load(); });
    std::this_thread::sleep_for(100ms);
    held.release.store(true);
  });
  waiting.store(true);
  rt.wait_idle();
  EXPECT_EQ(ran.load(), 100);
  releaser.join();
}

TEST(LockMode, SubmissionsAfterShutdownAreRefusedOnEveryPath) {
  strata::runtime rt(strata::test::workers(2));
  auto a = rt.make_resource();
  rt.shutdown();
  auto large = [pad = std::array<char, 96>{}] { (void)pad; };
  EXPECT_THROW(rt.submit_with_access({strata::write(a)}, [] {}), strata::runtime_error);
  EXPECT_THROW(rt.submit_with_access({strata::write(a)}, large), strata::runtime_error);
  EXPECT_THROW(rt.spawn_with_access({strata::write(a)}, [] {}), strata::runtime_error);
  EXPECT_THROW(rt.spawn_with_access({strata::write(a)}, large), strata::runtime_error);
}

// wait_idle counts detached lock-mode tasks blocked at submission too.
TEST(LockMode, WaitIdleWaitsForDetachedTasksBlockedAtSubmission) {
  strata::runtime rt(strata::test::workers(2));
  auto r = rt.make_resource();
  std::atomic<bool> release{false}, holding{false};
  std::atomic<int> ran{0};
  std::atomic<unsigned> held_on{0};
  rt.spawn_with_access({strata::write(r)}, [&] {
    held_on.store(strata::this_worker()->value);
    holding.store(true);
    while (!release.load()) std::this_thread::yield();
    ran.fetch_add(1);
  });
  struct let_go_on_exit {
    std::atomic<bool>& flag;
    ~let_go_on_exit() { flag.store(true); }
  } let_go{release};
  while (!holding.load()) std::this_thread::yield();
  for (int i = 0; i < 100; ++i) {
    strata::test::submit_off(rt, held_on.load(), [&] {
      rt.spawn_with_access({strata::read(r)}, [&] { ran.fetch_add(1); });
    });
  }
  // Queued (r looks held, the queues admit).
  ASSERT_TRUE(eventually([&] { return blocked_on(r) == 100; })) << "queued: " << blocked_on(r);
  // As above: the release comes in a window after the test thread enters
  // wait_idle, the window being what is tested.
  std::atomic<bool> waiting{false};
  std::thread releaser([&] {
    (void)eventually([&] { return waiting.load(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release.store(true);
  });
  waiting.store(true);
  rt.wait_idle();
  EXPECT_EQ(ran.load(), 101);
  releaser.join();
}

// A writer that holds r from construction until release(), which returns
// once it has let go (at the latest when it goes out of scope, before the
// runtime: a failed assertion does not leave the teardown waiting).
struct held_writer {
  std::atomic<bool> let_go{false}, holding{false}, released{false};
  strata::future<void> done;
  held_writer(strata::runtime& rt, strata::resource r)
      : done(rt.submit_with_access({strata::write(r)}, [this] {
          holding.store(true);
          while (!let_go.load()) std::this_thread::yield();
          released.store(true);
        })) {
    while (!holding.load()) std::this_thread::yield();
  }
  void release() {
    let_go.store(true);
    done.get();
  }
  ~held_writer() {
    let_go.store(true);
    if (done.valid()) done.wait();  // wait, not get: release() may have taken the value
  }
};

TEST(LockMode, BlockedTasksStartInPriorityOrder) {
  strata::runtime rt(strata::test::workers(2));
  auto r = rt.make_resource();
  held_writer held(rt, r);
  std::vector<int> prios(20);
  // Distinct, shuffled, none the default 0: a default-priority submission
  // does not look at its locks (queue_at_submission), so one a worker has
  // not yet refused when the holder lets go may take the lock first.
  for (int i = 0; i < 20; ++i) prios[static_cast<std::size_t>(i)] = 1 + (i * 7) % 20;
  std::mutex m;
  std::vector<int> order;
  for (int p : prios) {
    rt.submit_with_access({strata::write(r)}, [&, p] {
      std::lock_guard lock(m);
      order.push_back(p);
    }, strata::priority{p});
  }
  held.release();
  rt.wait_idle();
  ASSERT_EQ(order.size(), 20u);
  EXPECT_TRUE(std::is_sorted(order.rbegin(), order.rend())) << "blocked writers did not start by priority";
}

// A default-priority spawn from a worker does not look at its locks when
// submitted (resource.hpp, queue_at_submission): tasks spawned while their
// resource is held are refused when they run, wait, and run after the
// release, each once and one at a time.
TEST(LockMode, WorkerSpawnsOnAHeldResourceWaitAndRunOnceEach) {
  strata::runtime rt(strata::test::workers(2));
  auto r = rt.make_resource();
  held_writer held(rt, r);
  constexpr int k_tasks = 1000;
  std::atomic<int> ran{0}, early{0}, inside{0}, overlaps{0};
  const std::uint64_t queued_before = queued_by_workers(rt);
  rt.submit([&] {
      for (int i = 0; i < k_tasks; ++i) {
        strata::this_runtime()->spawn_with_access({strata::write(r)}, [&] {
          if (!held.released.load()) early.fetch_add(1);
          if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
          ran.fetch_add(1);
          inside.fetch_sub(1);
        });
      }
    }).get();
  ASSERT_TRUE(eventually([&] { return blocked_on(r) == k_tasks; })) << "refused and queued: " << blocked_on(r);
  EXPECT_EQ(queued_by_workers(rt) - queued_before, static_cast<std::uint64_t>(k_tasks))
      << "every one was a plain frame, refused when it ran";
  EXPECT_EQ(ran.load(), 0) << "a task ran while its resource was held";
  held.release();
  rt.wait_idle();
  EXPECT_EQ(ran.load(), k_tasks);
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(overlaps.load(), 0);
}

// Submissions with a priority look at their locks, from a worker too: those
// made while the resource is held wait in the queue and start by priority.
TEST(LockMode, BlockedTasksSubmittedOnAWorkerStartInPriorityOrder) {
  strata::runtime rt(strata::test::workers(2));
  auto r = rt.make_resource();
  held_writer held(rt, r);
  std::mutex m;
  std::vector<int> order;
  rt.submit([&] {
      for (int i = 0; i < 20; ++i) {
        const int p = 1 + (i * 7) % 20;  // distinct, shuffled, none the default 0
        strata::this_runtime()->spawn_with_access({strata::write(r)}, [&, p] {
          std::lock_guard lock(m);
          order.push_back(p);
        }, strata::priority{p});
      }
    }).get();
  held.release();
  rt.wait_idle();
  ASSERT_EQ(order.size(), 20u);
  EXPECT_TRUE(std::is_sorted(order.rbegin(), order.rend())) << "blocked writers did not start by priority";
}

TEST(LockMode, ReadersOvertakeAWaitingWriterAtMostTheLimit) {
  strata::config c = strata::test::workers(2);
  c.reader_front_runs = 4;
  strata::runtime rt(c);
  auto r = rt.make_resource();
  std::atomic<bool> release{false}, holding{false}, writer_done{false};
  std::atomic<int> overtakes{0};
  std::atomic<unsigned> held_on{0};
  auto first = rt.submit_with_access({strata::read(r)}, [&] {
    held_on.store(strata::this_worker()->value);
    holding.store(true);
    while (!release.load()) std::this_thread::yield();
  });
  while (!holding.load()) std::this_thread::yield();
  auto writer = strata::test::submit_off_in_order(
      rt, held_on.load(), [&] { return rt.submit_with_access({strata::write(r)}, [&] { writer_done.store(true); }); });
  std::vector<strata::future<void>> readers;
  for (int i = 0; i < 20; ++i) {
    readers.push_back(strata::test::submit_off_in_order(rt, held_on.load(), [&] {
      return rt.submit_with_access({strata::read(r)}, [&] {
        if (!writer_done.load()) overtakes.fetch_add(1);
      });
    }));
  }
  // Queued at submission by this thread: the writer and the 16 readers
  // beyond the front-run limit wait; the 4 front-runners were let through.
  ASSERT_TRUE(eventually([&] { return blocked_on(r) == 17; })) << "waiting on r: " << blocked_on(r);
  release.store(true);
  first.get();
  writer.get();
  for (auto& f : readers) f.get();
  EXPECT_TRUE(writer_done.load());
  // Exactly the limit: 4 of the 20 later readers ran before the writer, the
  // other 16 after it.
  EXPECT_EQ(overtakes.load(), 4) << "readers front-ran the waiting writer " << overtakes.load() << " times (limit 4)";
}

// Two writers each refused by the other's ticket (X reads a and writes b,
// Y writes a and reads b, front-run budgets spent): when the readers that
// held a and b leave, both resources are free and both requests must run.
// The trap: Y takes a for a moment (serving its own ticket), gives it back,
// and unless that moment makes a's queue get another look, X waits forever.
TEST(LockMode, WritersRefusedByEachOthersTicketsBothRun) {
  strata::config c = strata::test::workers(4);
  c.reader_front_runs = 1;
  strata::runtime rt(c);
  auto a = rt.make_resource();
  auto b = rt.make_resource();
  std::atomic<bool> release_a{false}, release_b{false}, in_a{false}, in_b{false};
  auto hold = [&rt](std::atomic<bool>& in, std::atomic<bool>& release) {
    in.store(true);
    while (!release.load()) {
      rt.submit([] {}).get();
      std::this_thread::yield();
    }
  };
  auto ra = rt.submit_with_access({strata::read(a)}, [&] { hold(in_a, release_a); });
  auto rb = rt.submit_with_access({strata::read(b)}, [&] { hold(in_b, release_b); });
  while (!in_a.load() || !in_b.load()) std::this_thread::yield();
  // Each waits on both resources it asks for (counted on a and on b).
  auto both_wait = [&](std::uint32_t n) { return blocked_on(a) == n && blocked_on(b) == n; };
  auto x = rt.submit_with_access({strata::read(a), strata::write(b)}, [] {});  // its ticket on b
  ASSERT_TRUE(eventually([&] { return both_wait(1); })) << "X does not wait";
  auto y = rt.submit_with_access({strata::write(a), strata::read(b)}, [] {});  // its ticket on a
  ASSERT_TRUE(eventually([&] { return both_wait(2); })) << "Y does not wait";
  rt.submit_with_access({strata::read(a)}, [] {}).get();  // spends a's front-run budget
  rt.submit_with_access({strata::read(b)}, [] {}).get();  // spends b's
  release_b.store(true);
  rb.get();
  // b's release re-evaluated its queue before rb's future was ready: X,
  // refused by Y's ticket on a, moved to a's queue; both still wait.
  ASSERT_TRUE(eventually([&] { return both_wait(2); })) << "after b's release: a " << blocked_on(a) << ", b " << blocked_on(b);
  release_a.store(true);
  ra.get();
  (void)eventually([&] { return x.ready() && y.ready(); });
  EXPECT_TRUE(x.ready()) << "X never ran with a and b free";
  EXPECT_TRUE(y.ready()) << "Y never ran with a and b free";
  if (!(x.ready() && y.ready())) rt.submit_with_access({strata::read(a)}, [] {}).get();  // unstick, so teardown ends
  rt.wait_idle();
}

// Submitters outside the workers race shutdown() on one contended
// resource: shutdown must finish (a request that got its lock in the
// submitter's retry must not be refused the hand-over to a worker, or it
// keeps the lock and shutdown waits forever). Every refusal is a clear
// runtime_error.
TEST(LockMode, ShutdownWhileOutsideSubmittersContendFinishes) {
  for (int round = 0; round < 20; ++round) {
    auto rt = std::make_unique<strata::runtime>(strata::test::workers(2));
    auto r = rt->make_resource();
    std::atomic<bool> stop{false};
    std::atomic<long> refused{0};
    // Submissions each submitter made: shutdown starts once all three
    // contend (a handshake, not a sleep that hopes they started).
    constexpr long k_contending = 50;
    std::array<std::atomic<long>, 3> accepted{};
    auto submitter = [&](std::atomic<long>& mine) {
      while (!stop.load()) {
        try {
          rt->submit_with_access({strata::write(r)}, [] {
            std::atomic<int> spin{0};
            while (spin.fetch_add(1, std::memory_order_relaxed) < 200) {  // relaxed: a delay
            }
          });
          mine.fetch_add(1);
        } catch (const strata::runtime_error&) {
          if (refused.fetch_add(1) > 1000) return;
        }
      }
    };
    std::thread a(submitter, std::ref(accepted[0])), b(submitter, std::ref(accepted[1])),
        c(submitter, std::ref(accepted[2]));
    const bool contending = eventually([&] {
      for (const auto& n : accepted) {
        if (n.load() < k_contending) return false;
      }
      return true;
    });
    EXPECT_TRUE(contending) << "the three submitters never all submitted (round " << round << ")";
    std::atomic<bool> done{false};
    std::thread closer([&] {
      rt->shutdown();
      done.store(true);
    });
    if (!eventually([&] { return done.load(); })) {
      ADD_FAILURE() << "shutdown did not finish in 10 s (round " << round << ")";
      std::_Exit(1);  // the runtime cannot be torn down: end the test binary instead of hanging
    }
    stop.store(true);
    a.join();
    b.join();
    c.join();
    closer.join();
  }
}

TEST(LockMode, DeterministicModeGivesTheSameOrderEveryRun) {
  auto run = [] {
    strata::config c = strata::test::workers(1);
    c.deterministic_seed = 7;
    strata::runtime rt(c);
    std::vector<int> trace;
    rt.submit([&] {
        auto& self = *strata::this_runtime();
        std::vector<strata::resource> res;
        for (int i = 0; i < 4; ++i) res.push_back(self.make_resource());
        for (int t = 0; t < 200; ++t) {
          self.submit_with_access({strata::write(res[static_cast<std::size_t>(t % 4)]), strata::read(res[static_cast<std::size_t>((t + 1) % 4)])},
                                  [&trace, t] { trace.push_back(t); }, strata::priority{t % 3});
        }
      }).get();
    rt.wait_idle();
    return trace;
  };
  const auto first = run();
  EXPECT_EQ(first.size(), 200u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(run(), first);
}

TEST(LockMode, BadUseIsAClearError) {
  strata::runtime rt(strata::test::workers(1));
  strata::runtime other(strata::test::workers(1));
  auto a = rt.make_resource();
  auto foreign = other.make_resource();
  auto expect_usage = [](auto&& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "accepted: " << text;
    } catch (const strata::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expect_usage([&] { rt.submit_with_access({}, [] {}); }, "empty access list");
  expect_usage([&] { rt.submit_with_access({strata::read(foreign)}, [] {}); }, "belongs to another runtime");
  expect_usage([&] { rt.submit_with_access({strata::read(a), strata::write(a)}, [] {}); }, "appears twice");
  expect_usage([&] { rt.submit_with_access({strata::read(strata::resource{})}, [] {}); }, "empty resource");
  expect_usage([&] { rt.spawn_with_access({}, [] {}); }, "spawn_with_access: empty access list");
  expect_usage([&] { rt.spawn_with_access({strata::read(foreign)}, [] {}); }, "belongs to another runtime");
  expect_usage([&] { rt.spawn_with_access({strata::write(a), strata::read(a)}, [] {}); }, "appears twice");
  std::vector<strata::access> six;
  for (int i = 0; i < 5; ++i) six.push_back(strata::read(rt.make_resource()));
  six.push_back(strata::write(six[2].res));
  expect_usage([&] { rt.submit_with_access(six, [] {}); }, "submit_with_access: resource");
  rt.wait_idle();
  EXPECT_EQ(rt.submit_with_access({strata::write(a)}, [] { return 5; }).get(), 5) << "still works";
}

TEST(LockMode, ReleasedResourcesAreReusedSoMakingThemAsYouGoStaysFlat) {
  strata::runtime rt(strata::test::workers(2));
  const auto first = rt.make_resource();
  rt.release_resource(first);
  std::uint32_t max_id = 0;
  long total = 0;
  // 10^4 make/use/release cycles, two resources alive at a time.
  for (int i = 0; i < 10'000; ++i) {
    auto a = rt.make_resource(), b = rt.make_resource();
    max_id = std::max({max_id, a.id(), b.id()});
    rt.submit_with_access({strata::write(a), strata::read(b)}, [&total] { ++total; }).get();
    strata::dataflow_graph g{rt};
    g.task({strata::inout(a)}, [&total] { ++total; });
    g.wait();
    rt.release_resource(a);
    rt.release_resource(b);
  }
  EXPECT_EQ(total, 20'000);
  EXPECT_LE(max_id, 2u) << "released states were not reused";
  // The first resource's state has been reused 10^4 times: its handle is stale.
  auto c = rt.make_resource();
  EXPECT_LE(c.id(), 2u);
  strata::dataflow_graph g{rt};
  EXPECT_THROW(g.task({strata::in(first)}, [] {}), strata::usage_error);
  g.task({strata::in(c)}, [&total] { ++total; });
  g.wait();
  EXPECT_EQ(total, 20'001);
}

TEST(LockMode, ReleasingAHeldAwaitedOrReleasedResourceIsAClearError) {
  strata::runtime rt(strata::test::workers(2));
  strata::runtime other(strata::test::workers(1));
  auto expect_usage = [](auto&& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "accepted: " << text;
    } catch (const strata::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  auto a = rt.make_resource();
  std::atomic<bool> started{false}, go{false};
  auto holder = rt.submit_with_access({strata::write(a)}, [&] {
    started = true;
    while (!go.load()) std::this_thread::yield();
  });
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  expect_usage([&] { rt.release_resource(a); }, "is held or awaited by a task");
  // A second writer from outside waits in the dispatcher's queue.
  auto waiter = rt.submit_with_access({strata::write(a)}, [] { return 7; });
  ASSERT_TRUE(eventually([&] { return blocked_on(a) == 1; }));
  go = true;
  holder.get();
  EXPECT_EQ(waiter.get(), 7);
  rt.wait_idle();
  rt.release_resource(a);
  expect_usage([&] { rt.release_resource(a); }, "released already");
  auto reused = rt.make_resource();
  ASSERT_EQ(reused.state(), a.state()) << "the only free state is reused";
  expect_usage([&] { rt.release_resource(a); }, "released already");
  strata::dataflow_graph g{rt};
  expect_usage([&] { g.task({strata::in(a)}, [] {}); }, "this handle is stale");
  expect_usage([&] { rt.release_resource(strata::resource{}); }, "empty");
  expect_usage([&] { rt.release_resource(other.make_resource()); }, "belongs to another runtime");
  EXPECT_EQ(rt.submit_with_access({strata::write(reused)}, [] { return 5; }).get(), 5) << "still works";
  rt.release_resource(reused);
}

}  // namespace
