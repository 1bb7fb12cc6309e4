// jacobi on strata: each sweep one strata::parallel_for over the interior
// rows with partition::numa_static (worker w always gets the same block of
// rows); the first touch is the same loop, so every block's pages sit on
// its worker's node. The sweeps run inside rt.submit(...).get(), so each
// loop starts on a worker, as in the other strata benchmarks.
#include <memory>

#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "jacobi/jacobi.hpp"

namespace strata_bench::jacobi {

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  auto g = std::make_shared<grids>(grid_size());
  strata::parallel_for(
      *rt, std::size_t{1}, g->n - 1, g->n,
      [init = g.get()](std::size_t lo, std::size_t hi) { init->init_rows(lo, hi); },
      strata::partition::numa_static);
  reference_checksum(g->n);
  return [rt, g] {
    const std::size_t n = opaque(g->n);
    strata::runtime& r = *rt;
    grids* gp = g.get();
    gp->begin_run();
    rt->submit([&r, gp, n] {
        for (unsigned s = 1; s <= k_sweeps; ++s) {
          double* dst = gp->dst(s);
          const double* src = gp->src(s);
          double* sums = gp->sums(s);
          strata::parallel_for(
              r, std::size_t{1}, n - 1, n,
              [dst, src, n, sums](std::size_t lo, std::size_t hi) { sweep_rows(dst, src, n, lo, hi, sums); },
              strata::partition::numa_static);
        }
      }).get();
    return gp->finish_run();
  };
}

}  // namespace strata_bench::jacobi
