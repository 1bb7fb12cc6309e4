// forkjoin, serial baseline: the "tasks" as plain calls (P = 1).
#include "forkjoin/forkjoin.hpp"

namespace strata_bench::forkjoin {
namespace {

[[gnu::noinline]] void task(counter& c) { ++c.value; }

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] {
    std::vector<counter> counters(1);
    const std::uint64_t iterations = opaque(k_iterations);
    for (std::uint64_t it = 0; it < iterations; ++it) {
      for (counter& c : counters) {
        task(c);
      }
    }
    return check(counters, iterations);
  };
}

}  // namespace strata_bench::forkjoin
