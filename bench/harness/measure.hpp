// measure(): one record per (benchmark, runtime, threads).
//
// prepare (runtime start, input data) -> 1 warm-up run -> N timed runs ->
// teardown. Only the runs are timed (steady_clock around the repetition,
// which includes its answer check: a comparison). The check is "ok" only
// when every run, warm-up included, returned the known answer. Benchmarks
// with a rate unit also get the median over the timed runs of work / time.
//
// measure_group() measures several configurations of one benchmark side by
// side: every one is prepared first, then the runs are interleaved (round
// r runs each configuration once, starting one further along the list each
// round, in alternating directions), then every one is torn down (a failed
// one at once). On a machine whose speed drifts
// (a shared VM: phases of a second or more that run 1.5-2x slower) each
// configuration then sees the same mix of fast and slow phases, so their
// ratio stays steady even when the absolute times do not. `before` runs
// before each prepare and each round's turn of a configuration (the
// harness: a pause for the threads of the previous run to go idle, the
// main thread's CPUs for the runtime). After that pause every runtime's
// threads are asleep and its data partly out of cache: when a
// configuration of the group ran its warm-up in under 0.1 s (where waking
// up would weigh), every configuration of the group runs once untimed
// right before each timed run, as it would back to back.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

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
  // Counters of the runtime per timed run (their mean), when its prepare
  // offered some (offer_counters): strata under STRATA_PERF_COUNTERS=1 gives
  // its workers' perf_event counts ("context_switches", ...).
  std::vector<std::pair<std::string, double>> counters;

  bool ok() const noexcept { return check == "ok"; }
  bool has_rate() const noexcept { return !rate_unit.empty(); }
};

// What a prepare function may offer the harness: a reader of its runtime's
// cumulative counters. The harness reads it right before and right after
// each timed run (outside the timing) and reports the mean difference.
using counter_reader = std::function<std::vector<std::pair<std::string, double>>()>;
// Called from a prepare function (bench/common/strata_session.hpp); the
// harness takes it for the configuration being prepared.
void offer_counters(counter_reader read);

// A record of benchmark b on runtime r with no result yet (params: params_of(b)).
record blank_record(const benchmark& b, runtime_id r, unsigned threads);

// Measures one version of b on runtime r; its params go into the record.
record measure(const benchmark& b, runtime_id r, const version& which, unsigned threads, unsigned reps);
// The same for b.prepare[r] (FAIL when it is null).
record measure(const benchmark& b, runtime_id r, unsigned threads, unsigned reps);

// One configuration of a group: a version of b on runtime r with P threads.
struct configuration {
  runtime_id runtime;
  version which;
  unsigned threads = 1;
};
// Measures the configurations of b with interleaved runs; one record each,
// in the order given.
std::vector<record> measure_group(const benchmark& b, const std::vector<configuration>& group, unsigned reps,
                                  const std::function<void(runtime_id)>& before = nullptr);

}  // namespace strata_bench
