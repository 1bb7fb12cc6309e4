// jacobi on oneTBB: each sweep one tbb::parallel_for over the interior rows
// with the static_partitioner, the same split as the first touch (oneTBB
// does not pin its threads).
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/tbb_session.hpp"
#include "jacobi/jacobi.hpp"

namespace strata_bench::jacobi {

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  auto g = std::make_shared<grids>(grid_size());
  session->run([init = g.get()] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(1, init->n - 1),
        [init](const tbb::blocked_range<std::size_t>& r) { init->init_rows(r.begin(), r.end()); },
        tbb::static_partitioner{});
  });
  reference_checksum(g->n);
  return [session, g] {
    const std::size_t n = opaque(g->n);
    grids* gp = g.get();
    gp->begin_run();
    session->run([gp, n] {
      for (unsigned s = 1; s <= k_sweeps; ++s) {
        double* dst = gp->dst(s);
        const double* src = gp->src(s);
        double* sums = gp->sums(s);
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(1, n - 1),
            [dst, src, n, sums](const tbb::blocked_range<std::size_t>& r) {
              sweep_rows(dst, src, n, r.begin(), r.end(), sums);
            },
            tbb::static_partitioner{});
      }
    });
    return gp->finish_run();
  };
}

}  // namespace strata_bench::jacobi
