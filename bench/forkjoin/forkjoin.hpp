// forkjoin: 10^4 empty fork-joins. Each iteration forks one task per worker
// (P tasks), each task bumps its own padded counter, and joins; the next
// iteration starts only after the join. The time is fork-join latency:
// waking or reaching P-1 other threads and hearing back from them.
//
// Check: every counter equals the iteration count, so iterations x P task
// executions were counted, each index exactly once per iteration.
//
// Per runtime:  serial   a loop calling a noinline empty task P = 1 times
//               tbb      tbb::parallel_for over [0, P), grain 1, simple_partitioner
//               omp      a plain `parallel for schedule(static, 1)` over P per
//                        iteration: a full fork (team wake-up) and join (barrier)
//               strata   strata::parallel_for(rt, 0, P, 1, body)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench.hpp"

namespace strata_bench::forkjoin {

inline constexpr std::uint64_t k_iterations = 10'000;

// One counter per task index, on its own cache line pair.
struct alignas(128) counter {
  std::uint64_t value = 0;
};

inline verdict check(const std::vector<counter>& counters, std::uint64_t iterations) {
  std::uint64_t total = 0;
  for (const counter& c : counters) {
    total += c.value;
    if (c.value != iterations) {
      return {false, "a task index ran " + std::to_string(c.value) + " times in " +
                         std::to_string(iterations) + " iterations"};
    }
  }
  return expect_equal("tasks counted", total, iterations * counters.size());
}

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(unsigned threads);

}  // namespace strata_bench::forkjoin
