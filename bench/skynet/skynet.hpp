// skynet (atemerev/skynet): a 10-ary tree of spawns with 10^6 leaves; leaf k
// returns k, every inner node returns the sum of its 10 children. 1,111,111
// tasks; the answer is 0 + 1 + ... + 999,999 = 499,999,500,000.
#pragma once

#include <cstdint>

#include "common/bench.hpp"

namespace strata_bench::skynet {

inline constexpr std::uint64_t k_leaves = 1'000'000;
inline constexpr std::uint64_t k_fanout = 10;
inline constexpr std::uint64_t k_answer = 499'999'500'000;

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(unsigned threads);         // task_group
repetition prepare_strata_invoke(unsigned threads);  // parallel_invoke

}  // namespace strata_bench::skynet
