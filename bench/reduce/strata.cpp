// reduce on strata: strata::parallel_reduce with the shared kernel; first
// touch by strata::parallel_for with the numa_static partition (the same
// range always lands on the same worker).
#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "reduce/reduce.hpp"

namespace strata_bench::reduce {

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  std::shared_ptr<double[]> a = allocate();
  double* data = a.get();
  rt->submit([&rt, data] {
      strata::parallel_for(
          *rt, std::size_t{0}, k_n, k_block,
          [data](std::size_t lo, std::size_t hi) {
            for (std::size_t i = lo; i < hi; ++i) {
              data[i] = value(i);
            }
          },
          strata::partition::numa_static);
    }).get();
  return [rt, a, data] {
    const std::size_t n = opaque(k_n);
    strata::runtime& r = *rt;
    const double sum = rt->submit([&r, data, n] {
                           return strata::parallel_reduce(
                               r, std::size_t{0}, n, 0.0,
                               [data](std::size_t lo, std::size_t hi, double acc) {
                                 return acc + sum_range(data, lo, hi);
                               },
                               [](double x, double y) { return x + y; });
                         }).get();
    return expect_equal("sum", sum, k_answer);
  };
}

}  // namespace strata_bench::reduce
