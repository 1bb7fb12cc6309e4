// stream on OpenMP: `parallel for schedule(static)` over blocks of k_block
// elements, each block one call of the shared triad kernel, for every pass
// and for the first touch, so thread t writes, and later reads and writes,
// the same contiguous run of blocks of every array. The harness runs OpenMP
// with OMP_PROC_BIND=close OMP_PLACES=cores unless the user set them.
#include <algorithm>
#include <memory>

#include <omp.h>

#include "stream/stream.hpp"

namespace strata_bench::stream {
namespace {

constexpr std::size_t k_block = std::size_t{1} << 16;  // elements per OpenMP iteration

}  // namespace

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  auto s = std::make_shared<plain_arrays>(array_size());
  plain_arrays* init = s.get();
  const std::size_t size = s->n;
  const std::size_t blocks = (size + k_block - 1) / k_block;
#pragma omp parallel for num_threads(p) schedule(static)
  for (std::size_t b = 0; b < blocks; ++b) {
    init->init(b * k_block, std::min(size, (b + 1) * k_block));
  }
  return [p, s, blocks] {
    const std::size_t n = opaque(s->n);
    const double* c = s->c.data();
    for (unsigned k = 0; k < k_passes; ++k) {
      const unsigned to = written_by(++s->passes);
      double* dst = s->xy[to].data();
      const double* src = s->xy[1 - to].data();
#pragma omp parallel for num_threads(p) schedule(static)
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t lo = b * k_block;
        triad(dst + lo, src + lo, c + lo, std::min(n, lo + k_block) - lo);
      }
    }
    return s->finish_run();
  };
}

}  // namespace strata_bench::stream
