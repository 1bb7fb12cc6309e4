// cholesky, serial baseline: the operations in loop order.
#include <memory>

#include "cholesky/cholesky.hpp"

namespace strata_bench::cholesky {

repetition prepare_serial(shape s, unsigned /*threads*/) {
  const tiled_matrix& a = input(s);
  auto m = std::make_shared<tiled_matrix>(s);
  return [&a, m] {
    load(*m, a);
    for (const op& o : ops(opaque(m->dims().tiles))) {
      run(*m, o);
    }
    return check(*m);
  };
}

}  // namespace strata_bench::cholesky
