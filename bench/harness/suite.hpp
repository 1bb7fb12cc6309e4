// The suite as the harness sees it: the runtimes strata-bench knows, how this
// binary can run each of them, and the list of benchmarks with their
// per-runtime prepare functions (see common/bench.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "common/bench.hpp"

namespace strata_bench {

enum class runtime_id : std::size_t { serial, strata, tbb, omp, omp_llvm };
inline constexpr std::size_t k_runtime_count = 5;
// The order in which runtimes run and are reported: serial first, so the
// speedup of the others is known.
inline constexpr std::array<runtime_id, k_runtime_count> k_runtimes{
    runtime_id::serial, runtime_id::strata, runtime_id::tbb, runtime_id::omp, runtime_id::omp_llvm};

std::string_view name(runtime_id r) noexcept;
std::optional<runtime_id> runtime_from_name(std::string_view name) noexcept;

enum class availability {
  in_process,  // its versions are compiled into this binary
  helper,      // run by the strata-bench-omp-llvm helper process (omp-llvm)
  absent,      // not built; why_absent says why
};

struct runtime_support {
  availability how;
  std::string_view detail;  // what it is (available) or why it is absent
};

runtime_support support(runtime_id r) noexcept;

struct benchmark {
  std::string_view name;
  std::string_view params;
  std::string_view summary;
  // Indexed by runtime_id; null where this binary has no in-process version.
  std::array<prepare_fn, k_runtime_count> prepare;
};

std::span<const benchmark> suite() noexcept;

}  // namespace strata_bench
