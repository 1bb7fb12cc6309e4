// runtime_stats: what every worker did, read while the runtime runs.
//
// Counters are written by their worker only and read here without stopping
// anybody, so a snapshot taken while tasks run is approximate (each counter
// is exact, the set is not simultaneous). After wait_idle() it is exact.
#pragma once

#include <cstdint>
#include <string>
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
  // Actors on this worker.
  std::uint64_t actors = 0;                  // live now
  std::uint64_t messages_local = 0;          // sent on this worker to its own actors (no queue)
  std::uint64_t messages_remote = 0;         // arrived through the inbox from other threads
  std::uint64_t mailbox_high_water = 0;      // deepest mailbox seen
  std::uint64_t dead_letters = 0;
  std::uint64_t actor_failures = 0;          // receive() threw
  std::uint64_t migrations_proposed = 0;     // by the load monitor, actors on this worker
  std::uint64_t migrations_done = 0;         // actors moved off this worker
  double busy_s = 0;
  double idle_s = 0;
  bool pinned = false;
};

struct runtime_stats {
  std::vector<worker_stats> workers;
  std::uint64_t external_submits = 0;
  std::string to_json() const;
  std::uint64_t total_executed() const noexcept;
  std::uint64_t total_stolen() const noexcept;
};

}  // namespace strata
