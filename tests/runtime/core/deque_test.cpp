// worker_deque / stealer: protocol cases and a single-threaded differential
// against std::deque with many resizes (the concurrent test is deque_stress_test).
#include <gtest/gtest.h>
#include <strata/runtime/ext/deque.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
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

}  // namespace
