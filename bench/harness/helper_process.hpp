// The omp-llvm runtime runs in a helper process: GNU libgomp (linked into
// strata-bench) and LLVM libomp must not share a process, so the OpenMP
// versions are also built with clang++ -fopenmp=libomp into
// strata-bench-omp-llvm, next to strata-bench. For each benchmark the parent
// runs the helper with the same thread list and repetitions and merges the
// records it prints (report.hpp, encode_record) into its own.
#pragma once

#include <string>
#include <vector>

#include "harness/measure.hpp"

namespace strata_bench {

// Per thread count, in order: the helper's records (one per version of the
// benchmark it has, variants included), or one FAIL record saying why the
// helper gave none.
std::vector<record> run_helper(const benchmark& b, const std::vector<unsigned>& threads,
                               unsigned reps);

}  // namespace strata_bench
