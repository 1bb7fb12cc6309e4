// measure(): one record per (benchmark, runtime, threads).
//
// prepare (runtime start, input data) -> 1 warm-up run -> N timed runs ->
// teardown. Only the runs are timed (steady_clock around the repetition,
// which includes its answer check: a comparison). The check is "ok" only
// when every run, warm-up included, returned the known answer. Benchmarks
// with a rate unit also get the median over the timed runs of work / time.
#pragma once

#include <string>

#include "harness/suite.hpp"

namespace strata_bench {

struct record {
  std::string bench;
  std::string params;
  std::string runtime;
  unsigned threads = 1;
  bool timed = false;  // false when no timed run completed (setup failed)
  double median_s = 0.0;
  double min_s = 0.0;
  double max_s = 0.0;
  unsigned reps = 0;   // timed runs completed
  std::string check;   // "ok" or "FAIL: ..."
  double rate = 0.0;      // median over the timed runs of work / seconds
  std::string rate_unit;  // "GB/s", "MLUP/s"; empty: no rate (the benchmark has none, or no timed run)

  bool ok() const noexcept { return check == "ok"; }
  bool has_rate() const noexcept { return !rate_unit.empty(); }
};

// A record of benchmark b on runtime r with no result yet (params: params_of(b)).
record blank_record(const benchmark& b, runtime_id r, unsigned threads);

// Measures one version of b on runtime r; its params go into the record.
record measure(const benchmark& b, runtime_id r, const version& which, unsigned threads, unsigned reps);
// The same for b.prepare[r] (FAIL when it is null).
record measure(const benchmark& b, runtime_id r, unsigned threads, unsigned reps);

}  // namespace strata_bench
