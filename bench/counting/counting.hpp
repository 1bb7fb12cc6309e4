// counting (Savina Counting, shamsimam/savina): a producer actor sends
// 1,000,000 increment messages to a counter actor, then asks it for the
// count; the counter answers with a message to the producer. One sender, one
// receiver, no waiting for answers: mailbox throughput (with two threads,
// MPSC enqueue on one side and dequeue on the other).
//
// The counter starts each run at 0 (it resets when it answers). The check:
// the count the producer got is 1,000,000.
#pragma once

#include <cstdint>

#include "common/bench.hpp"

namespace strata_bench::counting {

inline constexpr std::uint64_t k_messages = 1'000'000;

// The verdict of every version; the work is the increments, in millions.
inline verdict check(std::uint64_t count) {
  verdict v = expect_equal("count", count, k_messages);
  v.work = v.ok ? static_cast<double>(k_messages) / 1e6 : 0.0;
  return v;
}

repetition prepare_serial(unsigned threads);
// strata: the producer sticky on worker 0, the counter on worker 1 (worker
// 0 with 1 thread).
repetition prepare_strata(unsigned threads);
repetition prepare_caf(unsigned threads);

}  // namespace strata_bench::counting
