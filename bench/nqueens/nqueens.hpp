// nqueens(12), BOTS style: count the placements of 12 non-attacking queens.
// At every level j (row j) one task per column i: the task copies the
// parent's board (rows 0..j-1) into its own, puts the queen at (j, i),
// checks the board (BOTS checks every pair of queens) and recurses. No
// cutoff: about 10 million tasks of tens to hundreds of ns.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>

#include "common/bench.hpp"

namespace strata_bench::nqueens {

inline constexpr int k_n = 12;
inline constexpr std::uint64_t k_answer = 14200;

// board[r] = column of the queen in row r.
using board = std::array<signed char, 32>;

// True when no two of the first `rows` queens attack each other.
inline bool safe(const board& b, int rows) noexcept {
  for (int r = 0; r < rows; ++r) {
    for (int s = r + 1; s < rows; ++s) {
      const int d = b[static_cast<std::size_t>(s)] - b[static_cast<std::size_t>(r)];
      if (d == 0 || d == s - r || d == r - s) {
        return false;
      }
    }
  }
  return true;
}

// The board of one task: the parent's rows 0..row-1, then a queen at (row, column).
inline board place(const board& parent, int row, int column) noexcept {
  board b;
  std::memcpy(b.data(), parent.data(), static_cast<std::size_t>(row));
  b[static_cast<std::size_t>(row)] = static_cast<signed char>(column);
  return b;
}

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(unsigned threads);

}  // namespace strata_bench::nqueens
