// cholesky on OpenMP: `omp task` per operation with depend(in:) on the tiles
// it reads and depend(inout:) on the one it updates (each tile named by its
// first element; GCC calls a variable used only in depend unused, hence
// [[maybe_unused]]), created in loop order by one thread (`single` inside
// `parallel num_threads(P)`); the region's end waits for them.
#include <omp.h>

#include "cholesky/cholesky.hpp"

namespace strata_bench::cholesky {

repetition prepare_omp(shape s, unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  const tiled_matrix& a = input(s);
  auto m = std::make_shared<tiled_matrix>(s);
  return [&a, m, p] {
    tiled_matrix& w = *m;
    load(w, a);
    const auto t = static_cast<std::uint32_t>(opaque(w.dims().tiles));
#pragma omp parallel num_threads(p)
#pragma omp single
    for (std::uint32_t k = 0; k < t; ++k) {
      [[maybe_unused]] double* akk = w.tile(k, k);
      const op f{kind::potrf, k, k, k};
#pragma omp task depend(inout : akk[0]) firstprivate(f) shared(w)
      run(w, f);
      for (std::uint32_t i = k + 1; i < t; ++i) {
        [[maybe_unused]] double* aik = w.tile(i, k);
        const op o{kind::trsm, i, k, k};
#pragma omp task depend(in : akk[0]) depend(inout : aik[0]) firstprivate(o) shared(w)
        run(w, o);
      }
      for (std::uint32_t i = k + 1; i < t; ++i) {
        [[maybe_unused]] double* aik = w.tile(i, k);
        [[maybe_unused]] double* aii = w.tile(i, i);
        const op o{kind::syrk, i, i, k};
#pragma omp task depend(in : aik[0]) depend(inout : aii[0]) firstprivate(o) shared(w)
        run(w, o);
      }
      for (std::uint32_t i = k + 1; i < t; ++i) {
        for (std::uint32_t j = k + 1; j < i; ++j) {
          [[maybe_unused]] double* aik = w.tile(i, k);
          [[maybe_unused]] double* ajk = w.tile(j, k);
          [[maybe_unused]] double* aij = w.tile(i, j);
          const op o{kind::gemm, i, j, k};
#pragma omp task depend(in : aik[0], ajk[0]) depend(inout : aij[0]) firstprivate(o) shared(w)
          run(w, o);
        }
      }
    }
    return check(w);
  };
}

}  // namespace strata_bench::cholesky
