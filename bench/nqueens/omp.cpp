// nqueens on OpenMP: one `omp task` per column, `taskwait`, then the parent
// adds the children's counts (BOTS omp-tasks nqueens without cutoff, tied
// tasks).
#include <omp.h>

#include "common/slots.hpp"
#include "nqueens/nqueens.hpp"

namespace strata_bench::nqueens {
namespace {

std::uint64_t solve(int n, int row, const board* a) {
  if (row == n) {
    return 1;
  }
  child_slots solutions(static_cast<std::size_t>(n));
  std::uint64_t* slot = solutions.data();
  for (int column = 0; column < n; ++column) {
#pragma omp task firstprivate(n, row, column, a, slot)
    {
      const board b = place(*a, row, column);
      if (safe(b, row + 1)) {
        slot[column] = solve(n, row + 1, &b);
      }
    }
  }
#pragma omp taskwait
  return solutions.sum();
}

}  // namespace

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  return [p] {
    const int n = opaque(k_n);
    const board empty{};
    std::uint64_t r = 0;
#pragma omp parallel num_threads(p) shared(r, empty)
#pragma omp single
    r = solve(n, 0, &empty);
    return expect_equal("solutions", r, k_answer);
  };
}

}  // namespace strata_bench::nqueens
