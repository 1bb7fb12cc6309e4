// make_strata_runtime: one strata::runtime of P workers for one (benchmark,
// threads) configuration, created and destroyed outside the timed region.
//
// The configuration starts from the environment (STRATA_PLACES,
// STRATA_PROC_BIND, ... are honoured, as OMP_PROC_BIND is for OpenMP) and
// then sets the worker count from --threads. More workers than usable CPUs is
// allowed, as it is for oneTBB and OpenMP when asked for.
#pragma once

#include <memory>

#include <strata/strata.hpp>

#include "common/bench.hpp"

namespace strata_bench {

inline std::shared_ptr<strata::runtime> make_strata_runtime(unsigned threads) {
  strata::config c = strata::config::from_env();
  c.workers = threads;
  if (threads > usable_cpus()) {
    c.oversubscribe = true;
  }
  return std::make_shared<strata::runtime>(c);
}

}  // namespace strata_bench
