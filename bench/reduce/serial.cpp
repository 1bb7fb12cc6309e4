// reduce, serial baseline: one thread, the same kernel over the whole array.
#include "reduce/reduce.hpp"

namespace strata_bench::reduce {

repetition prepare_serial(unsigned /*threads*/) {
  std::shared_ptr<double[]> a = allocate();
  for (std::size_t i = 0; i < k_n; ++i) {
    a[i] = value(i);
  }
  return [a] { return expect_equal("sum", sum_range(a.get(), 0, opaque(k_n)), k_answer); };
}

}  // namespace strata_bench::reduce
