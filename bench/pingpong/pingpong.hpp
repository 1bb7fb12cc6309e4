// pingpong (Savina PingPong, shamsimam/savina): two actors, ping and pong.
// Ping sends ping(k), pong answers pong(k) to it, ping sends ping(k + 1) on
// the answer, for 40,000 round trips: 80,000 messages strictly one after
// the other, so a run measures the latency of one message (send, delivery,
// the receiver's turn), not throughput.
//
// Every round trip carries its number k; ping counts the answers and the
// answers whose number is not the one it sent last. The check: 40,000
// answers, none out of step.
#pragma once

#include <cstdint>
#include <string>

#include "common/bench.hpp"

namespace strata_bench::pingpong {

inline constexpr std::uint32_t k_round_trips = 40'000;
inline constexpr double k_messages = 2.0 * k_round_trips;

// What ping saw in one run.
struct outcome {
  std::uint32_t answers = 0;
  std::uint32_t out_of_step = 0;  // answers whose k was not the k last sent
};

// The verdict of every version; the work is the messages, in millions.
inline verdict check(const outcome& o) {
  if (o.answers != k_round_trips) {
    return {false, "answers = " + std::to_string(o.answers) + ", expected " + std::to_string(k_round_trips)};
  }
  if (o.out_of_step != 0) {
    return {false, std::to_string(o.out_of_step) + " answers out of step"};
  }
  return {true, {}, k_messages / 1e6};
}

repetition prepare_serial(unsigned threads);
// strata: both actors sticky on worker 0 (every message stays in the
// worker's own mailboxes), or ping on worker 0 and pong on worker 1 (every
// message crosses an inbox; needs 2 threads).
repetition prepare_strata_same_worker(unsigned threads);
repetition prepare_strata_cross_worker(unsigned threads);
repetition prepare_caf(unsigned threads);

}  // namespace strata_bench::pingpong
