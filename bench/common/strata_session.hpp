// make_strata_runtime: one strata::runtime of P workers for one (benchmark,
// threads) configuration, created and destroyed outside the timed region.
//
// The configuration starts from the environment (STRATA_PLACES,
// STRATA_PROC_BIND, ... are honoured, as OMP_PROC_BIND is for OpenMP) and
// then sets the worker count from --threads. Under STRATA_PERF_COUNTERS=1
// the runtime's perf_event counters go into the record, per timed run. More workers than usable CPUs is
// allowed, as it is for oneTBB and OpenMP when asked for.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <strata/strata.hpp>

#include "common/bench.hpp"
#include "harness/measure.hpp"

namespace strata_bench {

inline std::shared_ptr<strata::runtime> make_strata_runtime(unsigned threads) {
  strata::config c = strata::config::from_env();
  c.workers = threads;
  if (threads > usable_cpus()) {
    c.oversubscribe = true;
  }
  auto rt = std::make_shared<strata::runtime>(c);
  if (c.perf_counters) {
    // Per timed run: the workers' perf_event counts (the harness reads them
    // around each run; the runtime is held weakly, so teardown still ends it).
    offer_counters([weak = std::weak_ptr<strata::runtime>(rt)] {
      std::vector<std::pair<std::string, double>> sums;
      const auto r = weak.lock();
      if (!r) return sums;
      for (const auto& w : r->stats().workers) {
        for (const auto& ctr : w.counters) {
          if (ctr.first.rfind("perf.", 0) != 0) continue;
          auto it = std::find_if(sums.begin(), sums.end(), [&](const auto& kv) { return kv.first == ctr.first; });
          if (it == sums.end()) it = sums.insert(sums.end(), {ctr.first, 0.0});
          it->second += static_cast<double>(ctr.second);
        }
      }
      return sums;
    });
  }
  return rt;
}

}  // namespace strata_bench
