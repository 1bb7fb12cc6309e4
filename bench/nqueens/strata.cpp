// nqueens on strata: a strata::task_group per search node, one task per column.
#include <strata/strata.hpp>

#include "common/slots.hpp"
#include "common/strata_session.hpp"
#include "nqueens/nqueens.hpp"

namespace strata_bench::nqueens {
namespace {

std::uint64_t solve(int n, int row, const board& a) {
  if (row == n) {
    return 1;
  }
  child_slots solutions(static_cast<std::size_t>(n));
  strata::task_group g;
  for (int column = 0; column < n; ++column) {
    g.run([n, row, column, &a, &solutions] {
      const board b = place(a, row, column);
      if (safe(b, row + 1)) {
        solutions[static_cast<std::size_t>(column)] = solve(n, row + 1, b);
      }
    });
  }
  g.wait();
  return solutions.sum();
}

}  // namespace

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return solve(opaque(k_n), 0, board{}); }).get();
    return expect_equal("solutions", r, k_answer);
  };
}

}  // namespace strata_bench::nqueens
