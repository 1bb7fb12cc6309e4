// forkjoin on strata: per iteration strata::parallel_for over [0, P) with
// grain 1, started from a worker.
#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "forkjoin/forkjoin.hpp"

namespace strata_bench::forkjoin {

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt, threads] {
    std::vector<counter> counters(threads);
    const std::uint64_t iterations = opaque(k_iterations);
    strata::runtime& r = *rt;
    rt->submit([&r, &counters, iterations] {
        for (std::uint64_t it = 0; it < iterations; ++it) {
          strata::parallel_for(r, std::size_t{0}, counters.size(), std::size_t{1},
                               [&counters](std::size_t lo, std::size_t hi) {
                                 for (std::size_t i = lo; i < hi; ++i) {
                                   ++counters[i].value;
                                 }
                               });
        }
      }).get();
    return check(counters, iterations);
  };
}

}  // namespace strata_bench::forkjoin
