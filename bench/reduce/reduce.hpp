// reduce: the sum of 10^8 doubles (800 MB), a[i] = i * 0.5.
//
// Every partial sum is a multiple of 0.5 below 2^52, so it is exact in any
// order of additions: the answer, 0.5 * n(n-1)/2 = 2,499,999,975,000,000,
// is checked exactly and catches a range counted twice or missed.
//
// The array is allocated untouched and first-touched by the runtime under
// test (its own parallel loop, static partition where it has one) when the
// configuration is prepared, outside the timed region, so on a NUMA machine
// pages land where that runtime's threads touch them.
//
// All versions sum their chunks with the same kernel, sum_range: 8
// independent accumulators, so a chunk runs at memory bandwidth rather than
// at the 4-cycle latency of one dependent add chain (still exact, see above).
#pragma once

#include <cstddef>
#include <memory>

#include "common/bench.hpp"

namespace strata_bench::reduce {

inline constexpr std::size_t k_n = 100'000'000;
inline constexpr double k_answer = 0.5 * static_cast<double>(k_n / 2 * (k_n - 1));
inline constexpr std::size_t k_block = std::size_t{1} << 16;  // OpenMP iteration = one block

inline double value(std::size_t i) noexcept { return static_cast<double>(i) * 0.5; }

// A block of k_n doubles whose pages are not yet touched.
inline std::unique_ptr<double[]> allocate() { return std::make_unique_for_overwrite<double[]>(k_n); }

inline double sum_range(const double* a, std::size_t lo, std::size_t hi) noexcept {
  double s[8] = {};
  std::size_t i = lo;
  for (; i + 8 <= hi; i += 8) {
    for (std::size_t j = 0; j < 8; ++j) {
      s[j] += a[i + j];
    }
  }
  for (; i < hi; ++i) {
    s[0] += a[i];
  }
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(unsigned threads);

}  // namespace strata_bench::reduce
