// Test support for the lock-mode tests: `tasks` tasks over 64 resources,
// each with 1 to 4 random resources read or written, checked by shadow
// counters inside every task.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
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

inline void exclusion_run(std::size_t tasks, unsigned workers) {
  strata::runtime rt(strata::test::workers(workers));
  constexpr int k_res = 64;
  std::vector<strata::resource> res;
  for (int i = 0; i < k_res; ++i) res.push_back(rt.make_resource());
  std::vector<shadow> sh(k_res);
  std::atomic<std::uint64_t> violations{0}, ran{0};
  std::mt19937 rng(1234);
  std::vector<strata::future<void>> futures;
  for (std::size_t t = 0; t < tasks; ++t) {
    const int k = 1 + static_cast<int>(rng() % 4);
    std::vector<int> ids;
    while (static_cast<int>(ids.size()) < k) {
      const int r = static_cast<int>(rng() % k_res);
      if (std::find(ids.begin(), ids.end(), r) == ids.end()) ids.push_back(r);
    }
    std::vector<strata::access> acc;
    std::vector<std::pair<int, bool>> plan;
    for (int r : ids) {
      const bool w = rng() % 3 == 0;
      acc.push_back(w ? strata::write(res[static_cast<std::size_t>(r)]) : strata::read(res[static_cast<std::size_t>(r)]));
      plan.emplace_back(r, w);
    }
    rt.submit_with_access(acc, [&sh, &violations, &ran, plan] {
      for (auto [r, w] : plan) {
        auto& s = sh[static_cast<std::size_t>(r)];
        if (w) {
          if (s.writers.fetch_add(1) != 0 || s.readers.load() != 0) violations.fetch_add(1);
        } else {
          s.readers.fetch_add(1);
          if (s.writers.load() != 0) violations.fetch_add(1);
        }
      }
      for (auto [r, w] : plan) {
        auto& s = sh[static_cast<std::size_t>(r)];
        (w ? s.writers : s.readers).fetch_sub(1);
      }
      ran.fetch_add(1, std::memory_order_relaxed);
    });
  }
  rt.wait_idle();
  EXPECT_EQ(violations.load(), 0u);
  EXPECT_EQ(ran.load(), tasks);
}

}  // namespace strata::test
