// measure(): one record per (benchmark, runtime, threads).
//
// prepare (runtime start, input data) -> 1 warm-up run -> N timed runs ->
// teardown. Only the runs are timed (steady_clock around the repetition,
// which includes its answer check: a comparison). The check is "ok" only
// when every run, warm-up included, returned the known answer.
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

  bool ok() const noexcept { return check == "ok"; }
};

// A record of benchmark b on runtime r with no result yet.
record blank_record(const benchmark& b, runtime_id r, unsigned threads);

record measure(const benchmark& b, runtime_id r, unsigned threads, unsigned reps);

}  // namespace strata_bench
