// reduce on OpenMP: `parallel for schedule(static) reduction(+:sum)` over
// blocks of k_block elements, each block summed by the shared kernel; first
// touch by the same static schedule, so every thread sums the pages it touched.
#include <algorithm>

#include <omp.h>

#include "reduce/reduce.hpp"

namespace strata_bench::reduce {
namespace {

constexpr std::size_t k_blocks = (k_n + k_block - 1) / k_block;

}  // namespace

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  std::shared_ptr<double[]> a = allocate();
  double* data = a.get();
#pragma omp parallel for num_threads(p) schedule(static)
  for (std::size_t b = 0; b < k_blocks; ++b) {
    for (std::size_t i = b * k_block; i < std::min(k_n, (b + 1) * k_block); ++i) {
      data[i] = value(i);
    }
  }
  return [p, a, data] {
    const std::size_t n = opaque(k_n);
    double sum = 0.0;
#pragma omp parallel for num_threads(p) schedule(static) reduction(+ : sum)
    for (std::size_t b = 0; b < k_blocks; ++b) {
      sum += sum_range(data, b * k_block, std::min(n, (b + 1) * k_block));
    }
    return expect_equal("sum", sum, k_answer);
  };
}

}  // namespace strata_bench::reduce
