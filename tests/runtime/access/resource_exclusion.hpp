// Test support for the lock-mode tests: `tasks` tasks over 64 resources,
// each with 1 to 4 random resources read or written, checked by shadow
// counters inside every task.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <strata/strata.hpp>

#include "runtime_config.hpp"

namespace strata::test {

// Shadow counters per resource: a writer must find nobody inside, a reader
// no writer. Every task checks and counts.
struct shadow {
  std::atomic<int> readers{0};
  std::atomic<int> writers{0};
};

// How exclusion_run submits: a small body that travels in its task frame
// (future or detached), or a body too large for a frame (a heap request
// from the start).
enum class submission { future_in_frame, detached_in_frame, future_on_heap };

inline const char* name_of(submission how) {
  switch (how) {
    case submission::future_in_frame: return "future_in_frame";
    case submission::detached_in_frame: return "detached_in_frame";
    case submission::future_on_heap: return "future_on_heap";
  }
  return "unknown";
}
inline std::ostream& operator<<(std::ostream& os, submission how) { return os << name_of(how); }

// Every way of submitting, for a TEST_P over them, and its case names.
inline const auto k_all_submissions =
    ::testing::Values(submission::future_in_frame, submission::detached_in_frame, submission::future_on_heap);
struct submission_name {
  template <class Info>
  std::string operator()(const Info& info) const {
    return name_of(info.param);
  }
};

struct exclusion_state {
  std::vector<shadow> sh;
  std::atomic<std::uint64_t> violations{0}, ran{0};
};

// One task's plan: up to 4 resources, which of them it writes.
struct exclusion_plan {
  std::uint8_t ids[4];
  std::uint8_t n;
  std::uint8_t writes;  // bit i: ids[i] is written
};

inline void exclusion_check(exclusion_state& st, const exclusion_plan& p) {
  for (unsigned i = 0; i < p.n; ++i) {
    auto& s = st.sh[p.ids[i]];
    if ((p.writes >> i) & 1u) {
      if (s.writers.fetch_add(1) != 0 || s.readers.load() != 0) st.violations.fetch_add(1);
    } else {
      s.readers.fetch_add(1);
      if (s.writers.load() != 0) st.violations.fetch_add(1);
    }
  }
  for (unsigned i = 0; i < p.n; ++i) {
    auto& s = st.sh[p.ids[i]];
    (((p.writes >> i) & 1u) != 0 ? s.writers : s.readers).fetch_sub(1);
  }
  st.ran.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after wait_idle
}

inline void exclusion_run(std::size_t tasks, unsigned workers, submission how = submission::future_in_frame) {
  strata::runtime rt(strata::test::workers(workers));
  constexpr int k_res = 64;
  std::vector<strata::resource> res;
  for (int i = 0; i < k_res; ++i) res.push_back(rt.make_resource());
  exclusion_state st;
  st.sh = std::vector<shadow>(k_res);
  std::mt19937 rng(1234);
  for (std::size_t t = 0; t < tasks; ++t) {
    exclusion_plan p{};
    p.n = static_cast<std::uint8_t>(1 + rng() % 4);
    std::vector<strata::access> acc;
    for (unsigned i = 0; i < p.n; ++i) {
      std::uint8_t r;
      do {
        r = static_cast<std::uint8_t>(rng() % k_res);
      } while (std::find(p.ids, p.ids + i, r) != p.ids + i);
      p.ids[i] = r;
      const bool w = rng() % 3 == 0;
      if (w) p.writes = static_cast<std::uint8_t>(p.writes | (1u << i));
      acc.push_back(w ? strata::write(res[r]) : strata::read(res[r]));
    }
    auto small = [&st, p] { exclusion_check(st, p); };
    static_assert(strata::detail::k_access_in_frame<strata::detail::access_body_future<void, decltype(small)>>);
    switch (how) {
      case submission::future_in_frame:
        rt.submit_with_access(acc, small);
        break;
      case submission::detached_in_frame:
        rt.spawn_with_access(acc, small);
        break;
      case submission::future_on_heap: {
        std::vector<exclusion_plan> boxed(1, p);
        auto large = [&st, boxed, pad = std::array<char, 64>{}] { exclusion_check(st, boxed.front()); };
        static_assert(!strata::detail::k_access_in_frame<strata::detail::access_body_future<void, decltype(large)>>);
        rt.submit_with_access(acc, large);
        break;
      }
    }
  }
  rt.wait_idle();
  EXPECT_EQ(st.violations.load(), 0u);
  EXPECT_EQ(st.ran.load(), tasks);
}

}  // namespace strata::test
