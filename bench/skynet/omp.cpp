// skynet on OpenMP: one `omp task` per child, `taskwait`, then the parent
// adds the children's sums.
#include <omp.h>

#include "common/slots.hpp"
#include "skynet/skynet.hpp"

namespace strata_bench::skynet {
namespace {

std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) {
    return first;
  }
  const std::uint64_t part = size / k_fanout;
  child_slots sums(k_fanout);
  std::uint64_t* slot = sums.data();
  for (std::uint64_t i = 0; i < k_fanout; ++i) {
#pragma omp task firstprivate(first, part, i, slot)
    slot[i] = skynet(first + i * part, part);
  }
#pragma omp taskwait
  return sums.sum();
}

}  // namespace

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  return [p] {
    const std::uint64_t leaves = opaque(k_leaves);
    std::uint64_t r = 0;
#pragma omp parallel num_threads(p) shared(r)
#pragma omp single
    r = skynet(0, leaves);
    return expect_equal("sum", r, k_answer);
  };
}

}  // namespace strata_bench::skynet
