// Loops: parallel_for (every index once, chunks, empty ranges),
// parallel_reduce, the numa_static partition (the same chunks on the same
// workers every time) and exceptions out of loop bodies.
#include <gtest/gtest.h>
#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>

#include <atomic>
#include <cstdint>
#include <stdexcept>
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
                                    [](std::size_t lo, std::size_t) {
                                      if (lo == 500) throw std::runtime_error("one piece fails");
                                    }),
               std::runtime_error);
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1);
}

}  // namespace
