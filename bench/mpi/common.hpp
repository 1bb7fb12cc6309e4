// What the parts of strata-bench-mpi share: options, the report lines,
// medians, and the abort on a wrong result.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace strata_bench_mpi {

using clock_type = std::chrono::steady_clock;

struct options {
  int reps = 5;
  std::size_t rate_items = 2'000'000;
  std::size_t grid = 2048;                  // stencil: N x N cells over all ranks
  int steps = 40;                           // stencil iterations
  std::size_t updates = 10'000'000;         // histogram: updates over all ranks
  std::string json;
};

struct result {
  std::string bench, runtime, param, unit;
  double value = 0;
};

inline std::vector<result> g_results;
inline int g_rank = 0;
inline int g_size = 1;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

inline void report(const std::string& bench, const std::string& runtime, const std::string& param, double value,
                   const std::string& unit) {
  g_results.push_back({bench, runtime, param, unit, value});
  if (g_rank == 0) {
    std::printf("%-11s %-15s %-10s %12.3f %s\n", bench.c_str(), runtime.c_str(), param.c_str(), value, unit.c_str());
  }
  std::fflush(stdout);
}

[[noreturn]] inline void wrong(const std::string& what) {
  std::fprintf(stderr, "strata-bench-mpi: rank %d: WRONG RESULT: %s\n", g_rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

}  // namespace strata_bench_mpi
