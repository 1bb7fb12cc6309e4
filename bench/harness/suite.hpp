// The suite as the harness sees it: the runtimes strata-bench knows, how this
// binary can run each of them, and the list of benchmarks with their
// per-runtime prepare functions (see common/bench.hpp). Task and loop
// benchmarks run on serial, strata, tbb, omp and omp-llvm; the actor
// benchmarks (Savina) on serial, strata and caf.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/bench.hpp"

namespace strata_bench {

enum class runtime_id : std::size_t { serial, strata, tbb, omp, omp_llvm, caf };
inline constexpr std::size_t k_runtime_count = 6;
// The order in which runtimes run and are reported: serial first, so the
// speedup of the others is known.
inline constexpr std::array<runtime_id, k_runtime_count> k_runtimes{
    runtime_id::serial, runtime_id::strata, runtime_id::tbb, runtime_id::omp, runtime_id::omp_llvm, runtime_id::caf};

// A set of runtimes: the ones a benchmark has versions for.
class runtime_set {
 public:
  constexpr runtime_set(std::initializer_list<runtime_id> members) noexcept {
    for (runtime_id r : members) {
      m_bits |= std::uint32_t{1} << static_cast<std::size_t>(r);
    }
  }
  constexpr bool has(runtime_id r) const noexcept {
    return ((m_bits >> static_cast<std::size_t>(r)) & 1U) != 0;
  }

 private:
  std::uint32_t m_bits = 0;
};

// Task and loop benchmarks: every runtime but the actor framework.
inline constexpr runtime_set k_task_runtimes{runtime_id::serial, runtime_id::strata, runtime_id::tbb, runtime_id::omp,
                                             runtime_id::omp_llvm};
// Actor benchmarks: oneTBB and OpenMP have no actors.
inline constexpr runtime_set k_actor_runtimes{runtime_id::serial, runtime_id::strata, runtime_id::caf};

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

// One more version of a benchmark on one runtime, measured and reported as
// a record of its own whose params are the benchmark's followed by these
// (stream: a strata record per page placement).
struct variant {
  runtime_id runtime;
  std::string_view params;  // e.g. "placement=first-touch"
  prepare_fn prepare;       // null where this binary lacks the version
  // Fewer threads than this: not run (one line on stderr), e.g. pingpong
  // with its two actors on two workers.
  unsigned min_threads = 1;
};

struct benchmark {
  std::string_view name;
  std::string_view params;
  std::string_view summary;
  // Indexed by runtime_id; null where this binary has no in-process version
  // (or where the benchmark's versions for that runtime are all variants).
  std::array<prepare_fn, k_runtime_count> prepare;
  // Optional parts, defaulted for the benchmarks that have none:
  std::span<const variant> variants{};
  // The unit of the rate column ("GB/s", "MLUP/s"); empty: no rate. Each
  // repetition then returns its work in verdict::work (GB for GB/s).
  std::string_view rate_unit{};
  // The params as run, for benchmarks whose size the environment may
  // override (STRATA_BENCH_STREAM_N); null: params.
  std::string (*params_as_run)() = nullptr;
  // The runtimes it has versions for (where built in); the others are
  // skipped for it, not failed.
  runtime_set runtimes = k_task_runtimes;
};

// One thing measure() runs for a runtime: a prepare function and the params
// its record carries.
struct version {
  std::string params;
  prepare_fn prepare = nullptr;
  unsigned min_threads = 1;  // variant::min_threads
};

// The params of b's records: params_as_run() when set, else params.
std::string params_of(const benchmark& b);
// What runs for runtime r, in order: prepare[r] under params_of(b), then
// every variant of r whose prepare is compiled in; empty when b has nothing
// for r in this binary.
std::vector<version> versions_of(const benchmark& b, runtime_id r);

std::span<const benchmark> suite() noexcept;

}  // namespace strata_bench
