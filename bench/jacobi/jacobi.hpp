// jacobi: 50 sweeps of the 2-D 5-point Jacobi stencil on an n x n grid of
// doubles, n = 4096 (128 MiB per grid) (bench/README.md, "jacobi"):
//
//   dst[i][j] = 0.25 * ((src[i-1][j] + src[i+1][j]) + (src[i][j-1] + src[i][j+1]))
//
// for the interior 1 <= i, j <= n-2; row and column 0 and n-1 are a fixed
// boundary. Two grids, a and b, take turns (sweep s writes a when s is odd,
// b when even, and reads the other); sweep 1 reads a third, read-only grid
// u0 holding the initial state instead, so every timed run starts from the
// same state without a reset pass (each sweep still streams two grids).
// Rate: (n-2)^2 * 50 lattice updates per run, in MLUP/s.
//
// Rows are the unit of work: every runtime splits the interior rows
// [1, n-1) with its static schedule, the same split for the first touch of
// all three grids (boundary rows 0 and n-1 go with the first and last
// block), so each thread updates rows whose pages it placed.
//
// Check: the last sweep also sums each new row (row_sum, 8 accumulators in
// a fixed pattern) into rowsum[i]; the checksum adds rowsum[1..n-2] in row
// order. Every point is computed by the same expression in every version
// and every row summed the same way, so the checksum does not depend on the
// split and is compared exactly with the serial reference (computed once
// per size and process, before any timing, by plain sweeps on two grids).
//
// Quick tests shrink n with STRATA_BENCH_JACOBI_N (3 to 32768).
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/untouched.hpp"

namespace strata_bench::jacobi {

inline constexpr std::size_t k_default_n = 4096;
inline constexpr std::size_t k_max_n = 32768;
inline constexpr const char* k_n_variable = "STRATA_BENCH_JACOBI_N";
inline constexpr unsigned k_sweeps = 50;

// Grid side: STRATA_BENCH_JACOBI_N, else 4096; throws std::invalid_argument
// when the variable is not a number in [3, 32768].
std::size_t grid_size();
// "4096^2, 50 sweeps" (or the override), for the records.
std::string params();
// The checksum after k_sweeps sweeps from the initial state, by the serial
// code; computed on the first call for each n (thread-safe).
double reference_checksum(std::size_t n);

// Initial state, boundary included: small integers in a pattern that changes
// along both axes, so every row and column evolves differently.
inline double initial(std::size_t i, std::size_t j) noexcept { return static_cast<double>((i * 7 + j * 13) % 17); }

// The sum of row[1..n-2]: 8 accumulators (bandwidth, not add latency), in
// the same pattern for every row, so the result depends only on the row.
inline double row_sum(const double* row, std::size_t n) noexcept {
  double s[8] = {};
  std::size_t j = 1;
  for (; j + 8 <= n - 1; j += 8) {
    for (std::size_t k = 0; k < 8; ++k) {
      s[k] += row[j + k];
    }
  }
  for (; j < n - 1; ++j) {
    s[0] += row[j];
  }
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// Sweeps rows [lo, hi) (1 <= lo, hi <= n-1) of dst from src; with rowsum,
// also rowsum[i] = row_sum of each new row. The kernel of every version; not
// inlined, so it is the same machine code in each (inlined into the serial
// run, GCC spilled the row pointers inside the inner loop: 20 % slower).
[[gnu::noinline]] inline void sweep_rows(double* __restrict dst, const double* __restrict src, std::size_t n, std::size_t lo,
                       std::size_t hi, double* rowsum = nullptr) noexcept {
  for (std::size_t i = lo; i < hi; ++i) {
    double* out = dst + i * n;
    const double* up = src + (i - 1) * n;
    const double* mid = src + i * n;
    const double* down = src + (i + 1) * n;
    for (std::size_t j = 1; j + 1 < n; ++j) {
      out[j] = 0.25 * ((up[j] + down[j]) + (mid[j - 1] + mid[j + 1]));
    }
    if (rowsum != nullptr) {
      rowsum[i] = row_sum(out, n);
    }
  }
}

// Million lattice updates in one timed run.
inline double mlups_per_run(std::size_t n) noexcept {
  const double interior = static_cast<double>(n - 2);
  return k_sweeps * interior * interior * 1e-6;
}

// The three grids of one configuration, untouched until init_rows.
struct grids {
  explicit grids(std::size_t side)
      : n(side), u0(side * side), a(side * side), b(side * side), rowsum(side, 0.0) {}

  // Writes the initial state into rows [lo, hi) of the interior row range
  // of all three grids, plus row 0 when lo == 1 and row n-1 when hi == n-1:
  // the first touch, by the thread that will sweep these rows.
  void init_rows(std::size_t lo, std::size_t hi) noexcept {
    const std::size_t first = lo == 1 ? 0 : lo;
    const std::size_t last = hi == n - 1 ? n : hi;
    for (double* g : {u0.data(), a.data(), b.data()}) {
      for (std::size_t i = first; i < last; ++i) {
        for (std::size_t j = 0; j < n; ++j) {
          g[i * n + j] = initial(i, j);
        }
      }
    }
  }
  // Sweep s (1-based) reads src(s) and writes dst(s).
  const double* src(unsigned s) const noexcept { return s == 1 ? u0.data() : (s % 2 == 1 ? b.data() : a.data()); }
  double* dst(unsigned s) const noexcept { return s % 2 == 1 ? a.data() : b.data(); }
  // rowsum for the last sweep, null for the others.
  double* sums(unsigned s) noexcept { return s == k_sweeps ? rowsum.data() : nullptr; }

  // The start of a timed run: rowsum all NaN, so a row the last sweep
  // missed cannot pass with the previous run's sum.
  void begin_run() noexcept { std::fill(rowsum.begin(), rowsum.end(), std::numeric_limits<double>::quiet_NaN()); }
  // The end of a timed run: the exact checksum comparison, and the MLUP done.
  verdict finish_run() const {
    double checksum = 0.0;
    for (std::size_t i = 1; i + 1 < n; ++i) {
      checksum += rowsum[i];
    }
    verdict v = expect_equal("checksum", checksum, reference_checksum(n));
    v.work = mlups_per_run(n);
    return v;
  }

  std::size_t n;
  untouched_array u0, a, b;
  std::vector<double> rowsum;  // rowsum[i]: row i of the last sweep (1 <= i <= n-2)
};

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(unsigned threads);

}  // namespace strata_bench::jacobi
