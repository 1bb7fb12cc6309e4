// fib on OpenMP (built twice: GNU libgomp in strata-bench, LLVM libomp in the
// omp-llvm helper): `omp task` + `taskwait`, started by one thread of a
// parallel region of P threads. Tasks are tied (the default).
#include <omp.h>

#include "fib/fib.hpp"

namespace strata_bench::fib {
namespace {

std::uint64_t fib(int n) {
  if (n < 2) {
    return static_cast<std::uint64_t>(n);
  }
  std::uint64_t a = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  const std::uint64_t b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

}  // namespace

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  return [p] {
    const int n = opaque(k_n);
    std::uint64_t r = 0;
#pragma omp parallel num_threads(p) shared(r)
#pragma omp single
    r = fib(n);
    return expect_equal("fib(30)", r, k_answer);
  };
}

}  // namespace strata_bench::fib
