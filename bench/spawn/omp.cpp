// spawn on OpenMP: `parallel` + `single`, one thread of the team creating a
// `task` per item; the single's implicit barrier waits for them all.
#include <omp.h>

#include <cstring>
#include <memory>

#include "spawn/spawn.hpp"

namespace strata_bench::spawn {

repetition prepare_omp(unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  auto hit = std::make_shared<std::vector<std::uint8_t>>(tasks());
  return [p, hit] {
    std::memset(hit->data(), 0, hit->size());
    std::uint8_t* h = hit->data();
    const std::size_t n = opaque(hit->size());
#pragma omp parallel num_threads(p)
#pragma omp single
    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
      mark(h, i);
    }
    return check(*hit);
  };
}

}  // namespace strata_bench::spawn
