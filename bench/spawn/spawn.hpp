// spawn: 10^6 detached tasks submitted one by one by a single producer, then
// a wait for all of them: the cost of the submission path a program's main
// thread takes ("for each item, spawn a task"). Task i marks hit[i].
//
// Per runtime:  serial   a loop calling a noinline task
//               strata   rt.spawn from the harness thread, then wait_idle
//                        (producer=main), and the same loop inside one task
//                        on a worker (producer=worker)
//               tbb      tbb::task_group::run from the arena's master
//                        thread, then wait()
//               omp      `parallel` + `single`: one thread of the team
//                        creates `#pragma omp task`s, the barrier waits
//
// Check: every hit[i] is exactly 1 (each task ran once).
// Rate: million tasks per second. Quick tests shrink n with STRATA_BENCH_SPAWN_N.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench.hpp"

namespace strata_bench::spawn {

inline constexpr std::size_t k_default_n = 1'000'000;
inline constexpr std::size_t k_max_n = 100'000'000;
inline constexpr const char* k_n_variable = "STRATA_BENCH_SPAWN_N";

// n, from STRATA_BENCH_SPAWN_N when set (1 to k_max_n; throws
// std::invalid_argument naming the variable otherwise).
std::size_t tasks();
std::string params();

inline void mark(std::uint8_t* hit, std::size_t i) noexcept { ++hit[i]; }

verdict check(const std::vector<std::uint8_t>& hit);

repetition prepare_serial(unsigned threads);
repetition prepare_strata_main(unsigned threads);
repetition prepare_strata_worker(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);

}  // namespace strata_bench::spawn
