// nqueens on oneTBB: a task_group per search node, one task per column.
#include <tbb/task_group.h>

#include "common/slots.hpp"
#include "common/tbb_session.hpp"
#include "nqueens/nqueens.hpp"

namespace strata_bench::nqueens {
namespace {

std::uint64_t solve(int n, int row, const board& a) {
  if (row == n) {
    return 1;
  }
  child_slots solutions(static_cast<std::size_t>(n));
  tbb::task_group g;
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

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  return [session] {
    const std::uint64_t r = session->run([] { return solve(opaque(k_n), 0, board{}); });
    return expect_equal("solutions", r, k_answer);
  };
}

}  // namespace strata_bench::nqueens
