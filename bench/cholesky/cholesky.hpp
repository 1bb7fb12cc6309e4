// cholesky: the tiled right-looking Cholesky factorisation A = L L^T of a
// symmetric positive definite n x n matrix, as a task graph over tiles
// (the PLASMA / BOTS shape):
//
//   for k in 0..T-1:
//     potrf(A_kk)                              A_kk := chol(A_kk)
//     for i > k:      trsm(A_kk, A_ik)          A_ik := A_ik L_kk^-T
//     for i > k:      syrk(A_ik, A_ii)          A_ii -= A_ik A_ik^T
//     for i > j > k:  gemm(A_ik, A_jk, A_ij)    A_ij -= A_ik A_jk^T
//
// Only the lower tiles (i >= j) are stored and used. Each operation reads
// some tiles (in) and updates one (inout); every version runs the same
// list of operations (ops()) with the same out-of-line kernels
// (cholesky/kernels.cpp), and the parallel ones order them by these
// dependences only. Variants: 12 x 12 tiles of 96 (n = 1152, 364 tasks)
// and 24 x 24 tiles of 32 (n = 768, 2,600 tasks).
//
// The matrix: A_ij = u(i, j) in [0, 1) for i != j, symmetric (u from a hash
// of min, max), and A_ii = n + u(i, i): diagonally dominant, so SPD.
//
// Check: every update of a tile comes from a fixed chain (the gemm or syrk
// of k = 0, 1, ... then its trsm or potrf, ordered by the inout dependence),
// so each tile's result is the same floating-point sequence in every version
// and is compared exactly with the serial result, computed once per variant
// and process before any timing (and there verified: ||L L^T - A||_F /
// ||A||_F < 1e-10). Each run starts by copying A into the working tiles
// (inside the timing, serially: n^2/2 doubles, under 1 % of a run).
// Rate: GFLOP/s at n^3/3 flops per run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench.hpp"

namespace strata_bench::cholesky {

struct shape {
  std::size_t tiles;  // T: tiles per side
  std::size_t block;  // b: tile side
  std::size_t n() const noexcept { return tiles * block; }
};
inline constexpr shape k_coarse{12, 96};
inline constexpr shape k_fine{24, 32};

// A lower-tiled matrix: tile (i, j), i >= j, is b x b doubles, row-major,
// at data() + index(i, j) * b * b (tiles of the upper triangle unused).
class tiled_matrix {
 public:
  explicit tiled_matrix(shape s) : m_shape(s), m_data(s.tiles * s.tiles * s.block * s.block) {}
  const shape& dims() const noexcept { return m_shape; }
  std::size_t index(std::size_t i, std::size_t j) const noexcept { return i * m_shape.tiles + j; }
  double* tile(std::size_t i, std::size_t j) noexcept { return m_data.data() + index(i, j) * m_shape.block * m_shape.block; }
  const double* tile(std::size_t i, std::size_t j) const noexcept {
    return m_data.data() + index(i, j) * m_shape.block * m_shape.block;
  }
  double* data() noexcept { return m_data.data(); }
  const double* data() const noexcept { return m_data.data(); }
  std::size_t size() const noexcept { return m_data.size(); }

 private:
  shape m_shape;
  std::vector<double> m_data;
};

enum class kind : std::uint8_t { potrf, trsm, syrk, gemm };

// One operation of the factorisation: it updates tile (i, j) using tile
// (i, k), and for gemm also (j, k); potrf: i = j = k; trsm: reads (k, k),
// updates (i, k); syrk: reads (i, k), updates (i, i); gemm: reads (i, k) and
// (j, k), updates (i, j).
struct op {
  kind what;
  std::uint32_t i, j, k;
};

// The operations in the serial order of the loop nest above.
std::vector<op> ops(std::size_t tiles);
// The tiles (row, column) an operation reads, at most two; returns how many.
std::size_t inputs(const op& o, std::uint32_t (&row)[2], std::uint32_t (&col)[2]) noexcept;
// Runs one operation on m (the kernels, out of line).
void run(tiled_matrix& m, const op& o) noexcept;

// The input matrix and the serial result, once per shape and process.
const tiled_matrix& input(shape s);
const tiled_matrix& reference(shape s);
// Copies the lower tiles of the input into m.
void load(tiled_matrix& m, const tiled_matrix& a) noexcept;
// m's lower tiles equal the reference exactly; work = n^3/3 * 1e-9 (GFLOP).
verdict check(const tiled_matrix& m);

repetition prepare_serial(shape s, unsigned threads);
repetition prepare_strata(shape s, unsigned threads);
repetition prepare_strata_main(shape s, unsigned threads);  // built by the harness thread
repetition prepare_tbb(shape s, unsigned threads);
repetition prepare_omp(shape s, unsigned threads);

}  // namespace strata_bench::cholesky
