// worker_deque / stealer: single-threaded differential against std::deque
// (with many resizes), then owner + thieves with every id obtained exactly once.
#include <gtest/gtest.h>
#include <strata/runtime/ext/deque.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
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

TEST(Deque, EmptyPopAndSteal) {
  worker_deque<item> d(2);
  auto s = d.make_stealer();
  item x = 0;
  EXPECT_FALSE(d.pop(x));
  const auto r = s.steal();
  EXPECT_EQ(r.status, steal_status::empty);
  EXPECT_TRUE(d.requested()) << "an empty steal asks the owner to share";
}

TEST(Deque, PrivateWorkIsInvisibleUntilPublished) {
  worker_deque<item> d(4);
  auto s = d.make_stealer();
  for (item i = 1; i <= 4; ++i) d.push(i);
  EXPECT_EQ(s.steal().status, steal_status::empty);
  EXPECT_EQ(d.publish(), 2);  // half of the private part
  auto r = s.steal();
  ASSERT_EQ(r.status, steal_status::success);
  EXPECT_EQ(r.value, 1u) << "thieves take the oldest";
  item x = 0;
  ASSERT_TRUE(d.pop(x));
  EXPECT_EQ(x, 4u) << "the owner takes the youngest";
  ASSERT_TRUE(d.pop(x));
  EXPECT_EQ(x, 3u);
  ASSERT_TRUE(d.pop(x)) << "take-back from the shared part";
  EXPECT_EQ(x, 2u);
  EXPECT_FALSE(d.pop(x));
}

// Random pushes, pops, publishes and steals from one thread, mirrored on a
// std::deque: pop = back, steal = front (when the shared part is non-empty).
class DequeDifferential : public ::testing::TestWithParam<int> {};

TEST_P(DequeDifferential, MatchesStdDeque) {
  std::mt19937_64 rng(static_cast<unsigned>(GetParam()));
  worker_deque<item> d(2);  // tiny: forces many resizes
  auto s = d.make_stealer();
  std::deque<item> ref;
  std::size_t shared = 0;  // how many of ref's front elements are published
  item next = 1;
  const std::size_t ops = strata::test::scaled(400000);
  std::int64_t max_cap = 0;
  for (std::size_t op = 0; op < ops; ++op) {
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (r < 50) {
      d.push(next);
      ref.push_back(next++);
    } else if (r < 80) {
      item x = 0;
      const bool got = d.pop(x);
      ASSERT_EQ(got, !ref.empty());
      if (got) {
        ASSERT_EQ(x, ref.back());
        ref.pop_back();
        if (shared > ref.size()) shared = ref.size();
      }
    } else if (r < 90) {
      d.publish();
      shared = ref.size() - static_cast<std::size_t>(d.private_size());
    } else {
      const auto res = s.steal();
      if (shared > 0) {
        ASSERT_EQ(res.status, steal_status::success);
        ASSERT_EQ(res.value, ref.front());
        ref.pop_front();
        --shared;
      } else {
        ASSERT_EQ(res.status, steal_status::empty);
      }
    }
    max_cap = std::max(max_cap, d.capacity());
  }
  EXPECT_GE(max_cap, 64) << "the test must exercise growth";
  // Drain and compare what is left.
  item x = 0;
  while (d.pop(x)) {
    ASSERT_FALSE(ref.empty());
    ASSERT_EQ(x, ref.back());
    ref.pop_back();
  }
  EXPECT_TRUE(ref.empty());
}

INSTANTIATE_TEST_SUITE_P(Seeds, DequeDifferential, ::testing::Values(1, 2, 3, 4), strata::test::case_name{});

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
  for (unsigned t = 0; t < k; ++t) {
    thieves.emplace_back([&, s = d.make_stealer()] {
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
  std::mt19937_64 rng(7);
  std::size_t popped = 0;
  for (item i = 1; i <= n; ++i) {
    d.push(i);
    if (d.requested()) d.publish();
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
  if (n >= 100000) EXPECT_GT(stolen.load(), 0u) << "thieves never succeeded: the test did not test stealing";
}

INSTANTIATE_TEST_SUITE_P(Sizes, DequeStress,
                         ::testing::Values(stress_case{1000, 1}, stress_case{100000, 2}, stress_case{10000000, 3}),
                         strata::test::case_name{});

}  // namespace
