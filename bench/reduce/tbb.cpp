// reduce on oneTBB: tbb::parallel_reduce over a blocked_range (default
// auto_partitioner); first touch by parallel_for with the static_partitioner.
#include <functional>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "common/tbb_session.hpp"
#include "reduce/reduce.hpp"

namespace strata_bench::reduce {

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  std::shared_ptr<double[]> a = allocate();
  double* data = a.get();
  session->run([data] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, k_n),
        [data](const tbb::blocked_range<std::size_t>& r) {
          for (std::size_t i = r.begin(); i != r.end(); ++i) {
            data[i] = value(i);
          }
        },
        tbb::static_partitioner{});
  });
  return [session, a, data] {
    const std::size_t n = opaque(k_n);
    const double sum = session->run([data, n] {
      return tbb::parallel_reduce(
          tbb::blocked_range<std::size_t>(0, n), 0.0,
          [data](const tbb::blocked_range<std::size_t>& r, double acc) {
            return acc + sum_range(data, r.begin(), r.end());
          },
          std::plus<double>{});
    });
    return expect_equal("sum", sum, k_answer);
  };
}

}  // namespace strata_bench::reduce
