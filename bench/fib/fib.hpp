// fib(30) without cutoff: every call with n >= 2 spawns fib(n-1) as a task,
// computes fib(n-2) inline and joins. 2,692,537 tasks of almost no work, so
// the time is the spawn/join fast path.
#pragma once

#include <cstdint>

#include "common/bench.hpp"

namespace strata_bench::fib {

inline constexpr int k_n = 30;
inline constexpr std::uint64_t k_answer = 832040;

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(unsigned threads);         // task_group
repetition prepare_strata_invoke(unsigned threads);  // parallel_invoke

}  // namespace strata_bench::fib
