// nqueens, serial baseline: the same search and board copies, no tasks.
#include "nqueens/nqueens.hpp"

namespace strata_bench::nqueens {
namespace {

std::uint64_t solve(int n, int row, const board& a) {
  if (row == n) {
    return 1;
  }
  std::uint64_t solutions = 0;
  for (int column = 0; column < n; ++column) {
    const board b = place(a, row, column);
    if (safe(b, row + 1)) {
      solutions += solve(n, row + 1, b);
    }
  }
  return solutions;
}

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] { return expect_equal("solutions", solve(opaque(k_n), 0, board{}), k_answer); };
}

}  // namespace strata_bench::nqueens
