// runtime_stats: what every worker did, read while the runtime runs.
//
// Counters are written by their worker only and read here without stopping
// anybody, so a snapshot taken while tasks run is approximate (each counter
// is exact, the set is not simultaneous). After wait_idle() it is exact.
// The core fills the named fields; each module a runtime used (actors, lock
// mode) adds its per-worker counters by name (worker_stats::counters).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <strata/topology/placement.hpp>

namespace strata {

struct worker_stats {
  unsigned worker = 0;
  int pu = -1;
  int numa_node = -1;
  // parallel_invoke's first callables count as tasks too: spawned on the
  // worker that called it, executed on the one that ran it (the same worker
  // when it joined inline).
  std::uint64_t tasks_executed = 0;
  std::uint64_t tasks_spawned = 0;        // pushed on this worker's deque
  std::vector<std::uint64_t> steals_by_tier;  // index = position in the worker's tier list
  std::vector<std::string> tier_kinds;        // kind of each tier ("l3", "numa", ...)
  std::uint64_t tasks_stolen = 0;         // tasks taken by steals (batches count each task)
  std::uint64_t steal_attempts = 0;
  std::uint64_t steal_failures = 0;       // attempts that found nothing (empty or lost)
  std::uint64_t injector_tasks = 0;       // taken from a node injector
  std::uint64_t inbox_tasks = 0;          // taken from this worker's inbox
  std::uint64_t inbox_depth = 0;          // now
  std::uint64_t deque_high_water = 0;     // most tasks in the deque at once
  std::uint64_t publishes = 0;            // private work shared on a thief's request
  std::uint64_t parks = 0;
  std::uint64_t wakeups = 0;              // times this worker was woken
  std::uint64_t boxed_tasks = 0;          // callables too large for a frame
  std::uint64_t detached_exceptions = 0;
  double busy_s = 0;
  double idle_s = 0;
  bool pinned = false;
  // The modules' counters of this worker, by name, in the order the modules
  // added them (the actors' "messages_local", "dead_letters", ...; lock
  // mode's "lock_requests", ...). Present only for modules the runtime used.
  std::vector<std::pair<std::string, std::uint64_t>> counters;

  // The module counter `name`, or 0 when no module reported it (a module
  // this runtime never used reports nothing).
  std::uint64_t counter(std::string_view name) const noexcept;
  bool has_counter(std::string_view name) const noexcept;
  // Adds (or, when present, sets) a module counter.
  void set_counter(std::string_view name, std::uint64_t value);
};

struct runtime_stats {
  std::vector<worker_stats> workers;
  std::uint64_t external_submits = 0;
  std::string policy;                 // config.policy: "tiered_stealing", "pinned_mpsc" or "hybrid"
  std::uint64_t external_spills = 0;  // hybrid: submissions from outside sent to the spill queue
  // config.perf_counters: the events the kernel refused, and why ("cycles":
  // "No such file or directory: no hardware PMU ..."); the others are the
  // workers' "perf.<event>" counters.
  std::vector<std::pair<std::string, std::string>> unavailable_counters;
  std::string to_json() const;
  std::uint64_t total_executed() const noexcept;
  std::uint64_t total_stolen() const noexcept;
};

}  // namespace strata
