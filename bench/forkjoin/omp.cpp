// forkjoin on OpenMP: per iteration one `parallel for num_threads(P)
// schedule(static, 1)` over P indices, i.e. a fork of the team and the join
// at its closing barrier (EPCC's PARALLEL FOR). libgomp and libomp keep the
// team between regions, so this is the idiomatic OpenMP fork-join.
#include <omp.h>

#include "forkjoin/forkjoin.hpp"

namespace strata_bench::forkjoin {

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  return [p, threads] {
    std::vector<counter> counters(threads);
    counter* c = counters.data();
    const std::uint64_t iterations = opaque(k_iterations);
    for (std::uint64_t it = 0; it < iterations; ++it) {
#pragma omp parallel for num_threads(p) schedule(static, 1)
      for (int i = 0; i < p; ++i) {
        ++c[i].value;
      }
    }
    return check(counters, iterations);
  };
}

}  // namespace strata_bench::forkjoin
