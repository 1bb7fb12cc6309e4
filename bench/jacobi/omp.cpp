// jacobi on OpenMP: each sweep one `parallel for schedule(static)` over the
// interior rows; the first touch uses the same loop, so thread t sweeps the
// rows whose pages it placed. Pinning: OMP_PROC_BIND=close OMP_PLACES=cores
// unless the user set them (README).
#include <memory>

#include <omp.h>

#include "jacobi/jacobi.hpp"

namespace strata_bench::jacobi {

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  auto g = std::make_shared<grids>(grid_size());
  grids* init = g.get();
  const std::size_t rows_end = g->n - 1;
#pragma omp parallel for num_threads(p) schedule(static)
  for (std::size_t i = 1; i < rows_end; ++i) {
    init->init_rows(i, i + 1);
  }
  reference_checksum(g->n);
  return [p, g] {
    const std::size_t n = opaque(g->n);
    g->begin_run();
    for (unsigned s = 1; s <= k_sweeps; ++s) {
      double* dst = g->dst(s);
      const double* src = g->src(s);
      double* sums = g->sums(s);
#pragma omp parallel for num_threads(p) schedule(static)
      for (std::size_t i = 1; i < n - 1; ++i) {
        sweep_rows(dst, src, n, i, i + 1, sums);
      }
    }
    return g->finish_run();
  };
}

}  // namespace strata_bench::jacobi
