// Loops: parallel_for (every index once, chunks, empty ranges),
// parallel_reduce, the numa_static partition (the same chunks on the same
// workers every time) and exceptions out of loop bodies.
#include <gtest/gtest.h>
#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime_config.hpp"

namespace {

using strata::test::workers;

TEST(Loop, ParallelForCoversEveryIndexOnce) {
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

TEST(Loop, NumaStaticMapsChunksToTheSameWorkers) {
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

TEST(Loop, ParallelReduce) {
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

// parallel_reduce with numa_static: each owner reduces its own chunk, in
// order; the chunks' results combine in worker order (a non-commutative
// combine shows it: string concatenation of the pieces).
TEST(Loop, ReduceNumaStaticRunsOnTheOwnersInOrder) {
  strata::runtime rt{workers(3)};
  const std::size_t n = 30;
  const std::string order = strata::parallel_reduce(
      rt, 0, n, std::string{},
      [](std::size_t lo, std::size_t hi, std::string acc) {
        const unsigned w = strata::this_worker()->value;
        EXPECT_EQ(w, lo / 10) << "piece [" << lo << ", " << hi << ") runs on its owner";
        for (auto i = lo; i < hi; ++i) acc += static_cast<char>('a' + i % 26);
        return acc;
      },
      [](std::string a, const std::string& b) { return a + b; }, 4, strata::partition::numa_static);
  std::string want;
  for (std::size_t i = 0; i < n; ++i) want += static_cast<char>('a' + i % 26);
  EXPECT_EQ(order, want);
}

// The default partition of a big loop started from outside the workers (or
// from a task while the others idle) hands each owner its own chunk first:
// with every worker free, each index of a chunk runs on its numa_static
// owner unless a thief rebalanced it, which idle owners leave no reason for.
// An owner the OS descheduled is robbed, rightly, so the share is judged on
// the best of a few runs (a loaded 2-vCPU machine preempts a worker for
// longer than one 20 ms loop now and then); the first piece of each chunk is
// its owner's in every run (the owner's split keeps the leftmost piece;
// thieves take right halves).
TEST(Loop, TheDefaultPartitionStartsOnTheOwners) {
  strata::runtime rt{workers(2)};
  const std::size_t n = 1 << 20;
  std::vector<std::uint8_t> owner(n, 9);
  std::vector<std::uint8_t> static_owner(n, 9);
  strata::parallel_for(rt, 0, n, 1024, [&](std::size_t lo, std::size_t hi) {
    for (auto i = lo; i < hi; ++i) static_owner[i] = static_cast<std::uint8_t>(strata::this_worker()->value);
  }, strata::partition::numa_static);
  std::size_t best_on_owner = 0;
  for (int run = 0; run < 8 && best_on_owner < n / 10 * 6; ++run) {
    std::fill(owner.begin(), owner.end(), std::uint8_t{9});
    const double sum = strata::parallel_reduce(
        rt, 0, n, 0.0,
        [&](std::size_t lo, std::size_t hi, double acc) {
          for (auto i = lo; i < hi; ++i) {
            owner[i] = static_cast<std::uint8_t>(strata::this_worker()->value);
            acc += 1.0;
          }
          return acc;
        },
        [](double a, double b) { return a + b; }, 1024);
    ASSERT_EQ(sum, static_cast<double>(n));
    ASSERT_EQ(owner[0], 0u) << "run " << run;
    ASSERT_EQ(owner[n / 2], 1u) << "run " << run;
    std::size_t on_owner = 0;
    for (std::size_t i = 0; i < n; ++i) on_owner += owner[i] == static_owner[i];
    best_on_owner = std::max(best_on_owner, on_owner);
  }
  EXPECT_GE(best_on_owner, n / 10 * 6) << "the pieces run on their chunk's owner (stealing only rebalances)";
  // A small loop (fewer than 4 pieces per worker) keeps the work-first split.
  std::atomic<int> pieces{0};
  strata::parallel_for(rt, 0, 4, 1, [&](std::size_t, std::size_t) { pieces++; });
  EXPECT_EQ(pieces.load(), 4);
}

TEST(Loop, ExceptionsReachTheCaller) {
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
                                    [](std::size_t lo, std::size_t hi) {
                                      if (lo <= 500 && 500 < hi) throw std::runtime_error("one piece fails");
                                    }),
               std::runtime_error);
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1);
}

}  // namespace
