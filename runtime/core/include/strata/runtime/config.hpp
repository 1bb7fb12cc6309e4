// strata::config: the one struct users fill. Its placement part (workers,
// places, binding, machine: strata::placement_config, in the topology
// module) says where the workers go; its runtime part (strata::runtime_config,
// here) says how the runtime and its modules behave.
//
//   strata::config c = strata::config::from_env();  // every STRATA_* variable, validated
//   c.workers = 8;
//   c.engine = strata::engine::external;             // run_worker / tick (runtime.hpp)
//
// Every value is validated: a bad one throws strata::config_error naming the
// variable (or field), the value and the accepted forms.
#pragma once

#include <cstddef>
#include <string>

#include <strata/topology/config.hpp>

namespace strata {

// Who runs the worker loops.
enum class engine {
  owned,     // the runtime starts one pinned thread per worker (the default)
  external,  // the runtime starts no thread: user threads host the loops
             // (runtime::run_worker) or the caller runs them inline (runtime::tick)
};
const char* to_string(engine e) noexcept;

// How work is shared between workers.
enum class policy {
  tiered_stealing,  // split deques, steals by tiers of the machine (the default)
  pinned_mpsc,      // one queue per worker, no stealing: work runs where it was sent or spawned
  hybrid,           // pinned_mpsc with soft-bounded queues: work beyond hybrid_bound spills into a
                    // shared queue that every worker drains every 61st task and when idle
};
const char* to_string(policy p) noexcept;

struct runtime_config {
  strata::engine engine = strata::engine::owned;
  strata::policy policy = strata::policy::tiered_stealing;
  // Actors: the most messages one actor handles per turn before the others
  // on its worker (and the worker's tasks) get their turn. At least 1.
  unsigned actor_budget = 64;
  // Actors: how often the load monitor samples the workers (0: no monitor).
  unsigned monitor_period_ms = 5;
  // Lock-mode tasks: how many new readers may overtake a waiting writer.
  unsigned reader_front_runs = 8;
  // Event loops (strata::io): the longest a busy worker goes between two
  // non-blocking polls of its epoll set, in µs (STRATA_IO_POLL_US; 0: at
  // every chance, up to 1000000).
  unsigned io_poll_us = 50;
  // policy::hybrid: the tasks a worker's queue holds before further ones that
  // are not sticky spill into the shared queue (STRATA_HYBRID_BOUND, 1 to
  // 1048576).
  unsigned hybrid_bound = 16;
  // perf_event counters per worker in stats() (STRATA_PERF_COUNTERS=1|0):
  // context switches, CPU migrations, page faults; cycles, instructions and
  // LLC misses where the machine has a PMU (else listed as unavailable).
  bool perf_counters = false;
  // A timeline of the run (STRATA_TRACE): Chrome/Perfetto trace-event JSON
  // written to this file at shutdown ("%p" becomes the process id, "%n" the
  // runtime's number among those traced in the process); empty:
  // no trace. Each thread keeps its newest trace_events events
  // (STRATA_TRACE_EVENTS, 1024 to 2^26, rounded up to a power of two).
  std::string trace_file;
  std::size_t trace_events = std::size_t{1} << 18;

  // Reads STRATA_POLICY, STRATA_HYBRID_BOUND, STRATA_PERF_COUNTERS, STRATA_TRACE,
  // STRATA_TRACE_EVENTS and STRATA_IO_POLL_US. Unset keeps the default; a
  // set value must be valid.
  static runtime_config from_env();
  // Throws config_error for a value the runtime cannot honour.
  void validate() const;
};

struct config : placement_config, runtime_config {
  config() = default;
  config(const placement_config& p, const runtime_config& r) : placement_config(p), runtime_config(r) {}
  // Reads every STRATA_* variable of both parts.
  static config from_env();
};

}  // namespace strata
