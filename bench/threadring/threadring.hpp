// threadring (Savina ThreadRing, shamsimam/savina): 100 actors in a ring,
// actor i sends to actor i + 1 mod 100. A token starts at actor 0 with the
// count 100,000; an actor that gets it with count c > 0 passes it on with
// c - 1, the one that gets it with 0 stops the run. 100,000 passes, one
// message in flight at any time: hand-off latency around a ring, with
// every actor woken in turn.
//
// Each actor counts the passes it made, in its own slot of the run's
// outcome (128 bytes per slot, a pair of cache lines as the adjacent-line
// prefetcher moves them: neighbours in the ring may run on different
// threads, and the check must not add false sharing to a hop). The check:
// every actor passed the token exactly 100,000 / 100 times (so 100,000
// passes in all), and the run ended at actor 100,000 mod 100 = 0.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/bench.hpp"

namespace strata_bench::threadring {

inline constexpr std::uint32_t k_actors = 100;
inline constexpr std::uint32_t k_passes = 100'000;

struct alignas(128) pass_count {
  std::uint32_t n = 0;
};

struct outcome {
  std::array<pass_count, k_actors> passes{};  // slot i: written by actor i only
  std::uint32_t last = k_actors;              // the actor that got the count 0
};

// The verdict of every version; the work is the passes (messages), in millions.
inline verdict check(const outcome& o) {
  std::uint64_t total = 0;
  for (const pass_count& p : o.passes) {
    total += p.n;
  }
  if (total != k_passes) {
    return {false, "passes = " + std::to_string(total) + ", expected " + std::to_string(k_passes)};
  }
  for (std::uint32_t i = 0; i < k_actors; ++i) {
    if (o.passes[i].n != k_passes / k_actors) {
      return {false, "actor " + std::to_string(i) + " passed " + std::to_string(o.passes[i].n) + " times, expected " +
                         std::to_string(k_passes / k_actors)};
    }
  }
  if (o.last != k_passes % k_actors) {
    return {false, "the token ended at actor " + std::to_string(o.last) + ", expected " +
                       std::to_string(k_passes % k_actors)};
  }
  return {true, {}, k_passes / 1e6};
}

repetition prepare_serial(unsigned threads);
// strata, the ring's actors sticky on worker 0 (every pass stays on one
// worker: strata's placement of a conversation, and what CAF's scheduler
// does by itself, running an actor made ready on the sender's thread)...
repetition prepare_strata_same_worker(unsigned threads);
// ... or actor i sticky on worker i mod P (the round robin of spawn_actor,
// held fixed), so with 2 workers every pass crosses workers.
repetition prepare_strata_spread(unsigned threads);
repetition prepare_caf(unsigned threads);

}  // namespace strata_bench::threadring
