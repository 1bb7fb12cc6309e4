// jacobi, serial baseline: the calling thread first-touches the grids and
// runs the sweeps. Also the size, params and the serial reference checksum
// every version is compared with.
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "common/env_size.hpp"
#include "jacobi/jacobi.hpp"

namespace strata_bench::jacobi {

std::size_t grid_size() { return size_from_env(k_n_variable, k_default_n, 3, k_max_n); }

std::string params() {
  std::string side;
  try {
    side = std::to_string(grid_size());
  } catch (const std::invalid_argument&) {
    side = std::string("? (") + k_n_variable + ")";
  }
  return side + "^2, " + std::to_string(k_sweeps) + " sweeps";
}

namespace {

// Plain sweeps on two grids: b holds the initial state and is not written
// before sweep 2, so it stands in for u0 in sweep 1. Rows are summed after
// the last sweep, with the same row_sum, in row order.
double compute_reference(std::size_t n) {
  std::vector<double> a(n * n), b(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      a[i * n + j] = b[i * n + j] = initial(i, j);
    }
  }
  for (unsigned s = 1; s <= k_sweeps; ++s) {
    if (s % 2 == 1) {
      sweep_rows(a.data(), b.data(), n, 1, n - 1);
    } else {
      sweep_rows(b.data(), a.data(), n, 1, n - 1);
    }
  }
  const std::vector<double>& last = k_sweeps % 2 == 1 ? a : b;
  double checksum = 0.0;
  for (std::size_t i = 1; i + 1 < n; ++i) {
    checksum += row_sum(last.data() + i * n, n);
  }
  return checksum;
}

}  // namespace

double reference_checksum(std::size_t n) {
  static std::mutex mutex;
  static std::map<std::size_t, double> known;  // n -> checksum
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(n);
  if (it == known.end()) {
    it = known.emplace(n, compute_reference(n)).first;
  }
  return it->second;
}

repetition prepare_serial(unsigned /*threads*/) {
  auto g = std::make_shared<grids>(grid_size());
  g->init_rows(1, g->n - 1);
  reference_checksum(g->n);  // computed now, outside the timed runs
  return [g] {
    const std::size_t n = opaque(g->n);
    g->begin_run();
    for (unsigned s = 1; s <= k_sweeps; ++s) {
      sweep_rows(g->dst(s), g->src(s), n, 1, n - 1, g->sums(s));
    }
    return g->finish_run();
  };
}

}  // namespace strata_bench::jacobi
