// bank: 2,000,000 transfers between 4096 accounts, each transfer touching
// exactly two accounts (the lock-mode benchmark).
//
//   for each (from, to, amount): balance[from] -= amount; balance[to] += amount;
//
// Two variants of the transfer list: accounts drawn uniformly, or both ends
// drawn from Zipf(0.99) over the accounts (account 0 the hottest, about 11 %
// of the draws), so a few accounts are in most transfers and the lock of a
// hot account is contended. from != to (the second end is drawn again until
// it differs). The list is built once per (variant, size) and process from a
// fixed seed (std::mt19937_64, whose output the standard fixes, and our own
// draw of a double from it), outside any timing.
//
// Transfers are additions, so they commute: the final balances do not depend
// on the order in which the transfers ran, only on each running exactly once,
// atomically with respect to the others on the same accounts. Check, after
// every run: the total is unchanged and every balance equals the serial
// result (computed once per list, before any timing). Each run first resets
// the 4096 balances (inside the timing, about a microsecond).
//
// Rate: million transfers per second. Quick tests shrink the list with
// STRATA_BENCH_BANK_N (1 to 10^8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/bench.hpp"

namespace strata_bench::bank {

inline constexpr std::size_t k_accounts = 4096;
inline constexpr std::size_t k_default_n = 2'000'000;
inline constexpr std::size_t k_max_n = 100'000'000;
inline constexpr const char* k_n_variable = "STRATA_BENCH_BANK_N";
inline constexpr std::int64_t k_initial_balance = 1'000'000;
inline constexpr double k_zipf_s = 0.99;

enum class distribution { uniform, zipf };

struct transfer {
  std::uint32_t from;
  std::uint32_t to;
  std::int64_t amount;
};

// The list of one variant and its serial result; built on the first call for
// each (variant, STRATA_BENCH_BANK_N) and kept for the process (thread-safe).
// Throws std::invalid_argument on a bad STRATA_BENCH_BANK_N.
struct workload {
  std::vector<transfer> transfers;
  std::vector<std::int64_t> expected;  // final balances, by the serial loop
};
const workload& workload_of(distribution d);

// "accounts=4096 transfers=2000000" (or the override), for the records.
std::string params();

inline void reset(std::int64_t* balance) noexcept {
  for (std::size_t i = 0; i < k_accounts; ++i) {
    balance[i] = k_initial_balance;
  }
}

inline void apply(std::int64_t* balance, const transfer& t) noexcept {
  balance[t.from] -= t.amount;
  balance[t.to] += t.amount;
}

// The verdict of a run: total unchanged, every balance as in the serial
// result; work = million transfers (the rate).
verdict check(const workload& w, const std::int64_t* balance);

repetition prepare_serial(distribution d, unsigned threads);
repetition prepare_strata(distribution d, unsigned threads);       // producer: a task on a worker
repetition prepare_strata_main(distribution d, unsigned threads);  // producer: the harness thread
repetition prepare_omp_tasks(distribution d, unsigned threads);    // single producer, a task per transfer
repetition prepare_tbb(distribution d, unsigned threads);        // parallel_for
repetition prepare_tbb_tasks(distribution d, unsigned threads);  // a task per transfer

}  // namespace strata_bench::bank
