// The runtimes strata-bench knows and how this binary can run each: which
// ones were compiled in depends on what the build found,
// STRATA_BENCH_HAVE_TBB, STRATA_BENCH_HAVE_OPENMP, STRATA_BENCH_HAVE_RUNTIME,
// STRATA_BENCH_HAVE_CAF and STRATA_BENCH_OMP_LLVM_HELPER (see
// bench/CMakeLists.txt); the
// omp-llvm helper itself is built with STRATA_BENCH_LLVM_HELPER.
#include "harness/suite.hpp"

namespace strata_bench {

std::string_view name(runtime_id r) noexcept {
  switch (r) {
    case runtime_id::serial: return "serial";
    case runtime_id::strata: return "strata";
    case runtime_id::tbb: return "tbb";
    case runtime_id::omp: return "omp";
    case runtime_id::omp_llvm: return "omp-llvm";
    case runtime_id::caf: return "caf";
  }
  return "?";
}

std::optional<runtime_id> runtime_from_name(std::string_view n) noexcept {
  for (runtime_id r : k_runtimes) {
    if (name(r) == n) {
      return r;
    }
  }
  return std::nullopt;
}

runtime_support support(runtime_id r) noexcept {
#if defined(STRATA_BENCH_LLVM_HELPER)
  if (r == runtime_id::omp_llvm) {
    return {availability::in_process, "LLVM libomp (clang++)"};
  }
  return {availability::absent, "the omp-llvm helper runs omp-llvm only"};
#else
  switch (r) {
    case runtime_id::serial:
      return {availability::in_process, "plain C++ on the calling thread"};
    case runtime_id::strata:
#if defined(STRATA_BENCH_HAVE_RUNTIME)
      return {availability::in_process, "strata::runtime"};
#else
      return {availability::absent,
              "the strata runtime is not built into strata-bench (the strata::runtime target did "
              "not exist when bench/ was configured; reconfigure once the runtime module builds)"};
#endif
    case runtime_id::tbb:
#if defined(STRATA_BENCH_HAVE_TBB)
      return {availability::in_process, "oneTBB"};
#else
      return {availability::absent, "oneTBB was not found at configure time (apt-get install libtbb-dev)"};
#endif
    case runtime_id::omp:
#if defined(STRATA_BENCH_HAVE_OPENMP)
      return {availability::in_process, "GNU libgomp"};
#else
      return {availability::absent, "the compiler's OpenMP was not found at configure time"};
#endif
    case runtime_id::omp_llvm:
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
      return {availability::helper, "LLVM libomp, helper process " STRATA_BENCH_OMP_LLVM_HELPER};
#else
      return {availability::absent,
              "clang++ with LLVM libomp was not found at configure time "
              "(apt-get install clang libomp-dev)"};
#endif
    case runtime_id::caf:
#if defined(STRATA_BENCH_HAVE_CAF)
      return {availability::in_process, "C++ Actor Framework " STRATA_BENCH_CAF_VERSION ", actor benchmarks only"};
#else
      return {availability::absent,
              "the C++ Actor Framework 0.17 was not found at configure time (apt-get install libcaf-dev)"};
#endif
  }
  return {availability::absent, "unknown runtime"};
#endif
}

}  // namespace strata_bench
