// The kernel refuses memory: mmap fails inside numa_alloc (a frame pool's
// slab, a deque's bigger buffer, an arena chunk). The spawn or submission
// that needed it throws numa_bad_alloc before anything exists to undo;
// every task accepted before runs exactly once; nothing leaks (numa_alloc's
// bytes in use, threads); and the runtime goes on. A sweep fails every mmap
// of a runtime's life in turn, as SQLite's malloc tests do.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include <strata/strata.hpp>

#include "eventually.hpp"
#include "fault_support.hpp"
#include "runtime_config.hpp"

namespace {

using strata::fault::site;

bool is_enomem(const std::exception& e) {
  return std::string(e.what()).find(std::strerror(ENOMEM)) != std::string::npos;
}

struct life {
  bool started = false;
  long accepted = 0;  // tasks and messages
  long ran = 0;       // tasks run and messages received
  long refused = 0;     // refusals that surfaced as numa_bad_alloc
  long not_moved = 0;   // migrations answered false (refused memory, or the actor was busy)
};

struct add {
  long by;
};
struct get {};
struct tally : strata::actor<tally> {
  long n = 0;
  void receive(strata::actor_context&, const add& m) { n += m.by; }
  long receive(strata::actor_context&, const get&) { return n; }
};

// One runtime's life: start, an actor, outside submissions, nested spawns
// deep enough to grow a deque and several slabs, messages sent from tasks,
// eight migrations with messages between them, an ask. Refusals are caught
// where they surface and counted; everything accepted must run or arrive.
life live_once() {
  life l;
  std::atomic<long> ran{0};
  try {
    strata::runtime rt{strata::test::workers(2)};
    l.started = true;
    std::atomic<long> accepted_inside{0}, refused_inside{0};
    std::optional<strata::actor_ref<tally>> a;
    for (int attempt = 0; !a; ++attempt) {  // refused once at most: the plan fails one call
      try {
        a = rt.spawn_actor<tally>();
      } catch (const strata::numa_bad_alloc&) {
        ++l.refused;
        EXPECT_EQ(attempt, 0);
      }
    }
    for (int s = 0; s < 20; ++s) {
      try {
        rt.spawn([&] {
          strata::task_group g;
          for (int i = 0; i < 1500; ++i) {
            try {
              g.run([&] { ran.fetch_add(1); });
              accepted_inside.fetch_add(1);
            } catch (const strata::numa_bad_alloc&) {
              refused_inside.fetch_add(1);
            }
          }
          for (int i = 0; i < 300; ++i) {
            try {
              a->send(add{1});
              accepted_inside.fetch_add(1);
            } catch (const strata::numa_bad_alloc&) {
              refused_inside.fetch_add(1);
            }
          }
          g.wait();
          ran.fetch_add(1);
        });
        ++l.accepted;
      } catch (const strata::numa_bad_alloc&) {
        ++l.refused;
      }
    }
    rt.wait_idle();
    // Back and forth: from the second move on the chain grows a hop and the
    // home shortens it (forwarding.cpp), which needs frames too.
    for (unsigned m = 0; m < 8; ++m) {
      if (!rt.migrate_actor(*a, strata::worker_id{(m + 1) % 2}).get()) ++l.not_moved;
      for (int i = 0; i < 50; ++i) {
        try {
          rt.submit([&] { a->send(add{1}); }).get();
          ++l.accepted;
        } catch (const strata::numa_bad_alloc&) {
          ++l.refused;
        }
      }
    }
    rt.wait_idle();
    for (int attempt = 0;; ++attempt) {
      try {
        ran.fetch_add(a->ask(get{}).get());
        break;
      } catch (const strata::numa_bad_alloc&) {
        ++l.refused;
        EXPECT_EQ(attempt, 0);
      }
    }
    l.accepted += accepted_inside.load();
    l.refused += refused_inside.load();
  } catch (const strata::runtime_error& e) {
    EXPECT_FALSE(l.started) << "a started runtime threw " << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOMEM)), std::string::npos) << e.what();
  } catch (const strata::numa_bad_alloc& e) {
    EXPECT_FALSE(l.started) << "a started runtime threw " << e.what();
    EXPECT_TRUE(is_enomem(e)) << e.what();
  }
  l.ran = ran.load();
  return l;
}

// Fails the k-th mapping of a runtime's life, for k = 0, 1, 2, ... until a
// life needs fewer mappings than k. Each life: refused at start (a clear
// error, no thread left) or started, and then every accepted task ran once.
// First in the file: in a fresh process (as ctest runs each case) the first
// lives map the arenas' chunks while the runtime starts, so the sweep fails
// starts as well as submissions; later lives find the chunks mapped.
TEST(FaultMemory, EveryMappingOfARuntimesLifeCanFail) {
  const std::size_t threads_before = strata::test::threads_now();
  const std::uint64_t in_use_before = strata::numa_stats().total_in_use();
  std::uint64_t injected = 0, at_start = 0, in_tasks = 0;
  std::uint64_t k = 0;
  for (; k < 400; ++k) {
    life l;
    std::uint64_t hit = 0;
    {
      strata::test::armed_fault f(site::mmap, ENOMEM, k);
      l = live_once();
      hit = f.injected();
    }
    if (!l.started) {
      EXPECT_EQ(hit, 1u) << "a runtime failed to start without an injected fault (k = " << k << ")";
      ++at_start;
    } else {
      EXPECT_EQ(l.ran, l.accepted) << "k = " << k << ": accepted " << l.accepted << ", ran " << l.ran;
      // Each refusal surfaced once: as an exception, or as a move answered false.
      EXPECT_LE(static_cast<std::uint64_t>(l.refused), hit) << "k = " << k;
      EXPECT_GE(static_cast<std::uint64_t>(l.refused + l.not_moved), hit) << "k = " << k << ": a refusal was lost";
      in_tasks += hit;
    }
    injected += hit;
    EXPECT_EQ(strata::test::threads_now(), threads_before) << "k = " << k;
    EXPECT_EQ(strata::numa_stats().total_in_use(), in_use_before) << "k = " << k << ": numa_alloc bytes leaked";
    if (hit == 0) break;  // this life needed fewer than k + 1 mappings: every one has failed once
  }
  EXPECT_LT(k, 400u) << "the sweep did not reach the end of a life";
  EXPECT_GT(at_start, 0u);
  EXPECT_GT(in_tasks, 0u);
  std::printf("[ fault    ] %llu mmap faults injected over %llu lives: %llu at start, %llu in submissions\n",
              static_cast<unsigned long long>(injected), static_cast<unsigned long long>(k + 1),
              static_cast<unsigned long long>(at_start), static_cast<unsigned long long>(in_tasks));
}

// From the main thread: the first submission needs a slab for the caller's
// lane; refused, it throws and is not counted, so wait_idle still returns.
TEST(FaultMemory, ASubmissionRefusedMemoryThrowsAndIsNotCounted) {
  if (!strata::test::steals()) GTEST_SKIP() << "pinned_mpsc and hybrid take outside submissions in heap frames";
  strata::runtime rt{strata::test::workers(2)};
  std::atomic<int> ran{0};
  {
    strata::test::armed_fault f(site::mmap, ENOMEM);
    try {
      rt.spawn([&] { ran.fetch_add(1); });
      ADD_FAILURE() << "no mapping was needed: the seam was not reached";
    } catch (const strata::numa_bad_alloc& e) {
      EXPECT_TRUE(is_enomem(e)) << e.what();
    }
    EXPECT_EQ(f.injected(), 1u);
  }
  rt.wait_idle();  // returns: the refused task was never counted
  EXPECT_EQ(ran.load(), 0);
  for (int i = 0; i < 1000; ++i) rt.spawn([&] { ran.fetch_add(1); });
  rt.wait_idle();
  EXPECT_EQ(ran.load(), 1000);
}

// On a worker: a task spawns children that cannot finish (they wait for
// `go`), so its pool and deque must grow; the first refused mapping makes
// task_group::run throw. Every child accepted runs once, and spawning works
// again once memory is back.
TEST(FaultMemory, ASpawnRefusedMemoryThrowsEveryAcceptedChildRunsOnce) {
  strata::runtime rt{strata::test::workers(2)};
  std::atomic<bool> go{false};
  std::atomic<long> ran{0};
  long accepted = 0;
  std::string error;
  std::uint64_t injected = 0;
  rt.submit([&] {
      strata::task_group g;
      for (int i = 0; i < 100; ++i) g.run([&] { ran.fetch_add(1); });  // the worker's first slab
      g.wait();
      {
        strata::test::armed_fault f(site::mmap, ENOMEM);
        try {
          for (long i = 0; i < 100000; ++i) {
            g.run([&] {
              while (!go.load()) std::this_thread::yield();
              ran.fetch_add(1);
            });
            ++accepted;
          }
        } catch (const strata::numa_bad_alloc& e) {
          error = e.what();
        }
        injected = f.injected();
      }
      go.store(true);
      g.wait();
      for (int i = 0; i < 5000; ++i) g.run([&] { ran.fetch_add(1); });
      g.wait();
    }).get();
  EXPECT_EQ(injected, 1u);
  EXPECT_NE(error.find(std::strerror(ENOMEM)), std::string::npos) << "refused with: " << error;
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 100000) << "nothing needed new memory";
  EXPECT_EQ(ran.load(), accepted + 5100);
  std::printf("[ fault    ] refused after %ld children accepted: %s\n", accepted, error.c_str());
}

}  // namespace
