// worker_deque / stealer under concurrency: one owner and k thieves, every
// id obtained exactly once (label stress; TSAN runs this).
#include <gtest/gtest.h>
#include <strata/runtime/ext/deque.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "param_name.hpp"
#include "scale.hpp"

namespace {

using strata::steal_status;
using strata::worker_deque;
using item = std::uintptr_t;

// One owner pushes ids 1..n (popping some itself, publishing on request),
// k thieves steal; every id must be obtained exactly once.
struct stress_case {
  std::size_t items;
  unsigned thieves;
};
void PrintTo(const stress_case& c, std::ostream* os) { *os << c.items << " items, " << c.thieves << " thieves"; }

class DequeStress : public ::testing::TestWithParam<stress_case> {};

TEST_P(DequeStress, EveryIdExactlyOnce) {
  const std::size_t n = strata::test::scaled(GetParam().items);
  const unsigned k = GetParam().thieves;
  auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(n + 1);
  worker_deque<item> d(8);
  std::atomic<bool> owner_done{false};
  std::atomic<std::size_t> stolen{0}, lost{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::vector<std::thread> thieves;
  std::atomic<unsigned> started{0};
  for (unsigned t = 0; t < k; ++t) {
    thieves.emplace_back([&, s = d.make_stealer()] {
      started.fetch_add(1, std::memory_order_release);
      std::size_t mine = 0;
      for (;;) {
        const auto r = s.steal();
        if (r.status == steal_status::success) {
          hits[r.value].fetch_add(1, std::memory_order_relaxed);
          ++mine;
        } else if (r.status == steal_status::lost) {
          lost.fetch_add(1, std::memory_order_relaxed);
        } else if (owner_done.load(std::memory_order_acquire) && s.shared_size() == 0) {
          break;
        }
        if (std::chrono::steady_clock::now() > deadline) break;
      }
      stolen.fetch_add(mine, std::memory_order_relaxed);
    });
  }
  while (started.load(std::memory_order_acquire) < k) std::this_thread::yield();
  std::mt19937_64 rng(7);
  std::size_t popped = 0;
  for (item i = 1; i <= n; ++i) {
    d.push(i);
    if (d.requested()) d.publish();
    if (i % 4096 == 0) std::this_thread::yield();  // on a loaded 2-core box, let the thieves run
    if (rng() % 3 == 0) {
      item x = 0;
      if (d.pop(x)) {
        hits[x].fetch_add(1, std::memory_order_relaxed);
        ++popped;
      }
    }
  }
  // Share what is left with the thieves, popping the rest ourselves.
  item x = 0;
  while (true) {
    d.publish();
    if (!d.pop(x)) break;
    hits[x].fetch_add(1, std::memory_order_relaxed);
    ++popped;
  }
  owner_done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();
  ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "stress test timed out";
  std::size_t bad = 0;
  for (std::size_t i = 1; i <= n; ++i) bad += hits[i].load(std::memory_order_relaxed) != 1;
  EXPECT_EQ(bad, 0u) << "ids not obtained exactly once";
  EXPECT_EQ(popped + stolen.load(), n);
  if (n >= 1000000) {
    EXPECT_GT(stolen.load(), 0u) << "thieves never succeeded: the test did not test stealing";
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, DequeStress,
                         ::testing::Values(stress_case{1000, 1}, stress_case{100000, 2}, stress_case{10000000, 3}),
                         strata::test::case_name{});

}  // namespace
