// Profiling regions (<strata/runtime/profile.hpp>): entered on the main
// thread and on every worker, nested, and left by an exception; with
// STRATA_WITH_LIKWID each entry reaches likwid's Marker API, which answers
// 0 under likwid-perfctr -m and -EFAULT (-14) without it. Without likwid a
// region is an empty object.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <strata/runtime/parallel.hpp>
#include <strata/runtime/profile.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>

#include "runtime_config.hpp"

namespace {

std::uint64_t entries(const char* name) {
  for (const auto& c : strata::profile::counts()) {
    if (c.name == name) return c.entries;
  }
  return 0;
}

TEST(Profile, RegionsOnEveryThreadNestedAndThroughExceptions) {
  strata::runtime rt{strata::test::workers(2)};
  const std::uint64_t outer0 = entries("test.outer"), inner0 = entries("test.inner");
  std::atomic<int> ran{0};
  {
    strata::profile::region main_region{"test.outer"};
    strata::parallel_for(rt, 0, 64, 1, [&](std::size_t lo, std::size_t hi) {
      strata::profile::region r{"test.outer"};
      for (std::size_t i = lo; i < hi; ++i) {
        strata::profile::region inner{"test.inner"};
        ran.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  EXPECT_EQ(ran.load(), 64);
  try {
    strata::profile::region r{"test.throws"};
    throw std::runtime_error("leaves the region");
  } catch (const std::runtime_error&) {
  }
  if (!strata::profile::k_enabled) {
    EXPECT_TRUE(strata::profile::counts().empty());
    GTEST_SKIP() << "built without STRATA_WITH_LIKWID: regions compile to nothing";
  }
  EXPECT_EQ(entries("test.inner") - inner0, 64u);
  EXPECT_GE(entries("test.outer") - outer0, 2u) << "the main thread's and at least one chunk's";
  EXPECT_EQ(entries("test.throws"), 1u);
  const bool under_perfctr = std::getenv("LIKWID_MODE") != nullptr;
  for (const auto& c : strata::profile::counts()) {
    if (c.name.rfind("test.", 0) != 0) continue;
    // The status comes from liblikwid itself: the call reached it.
    EXPECT_EQ(c.likwid_status, under_perfctr ? 0 : -14) << c.name;
  }
}

// Under STRATA_PERF_COUNTERS a region adds what its thread counted inside
// it: 4 MiB of fresh pages touched inside "test.faults" on each worker are
// about a thousand page faults, and the region shows them in counts() and
// in stats().to_json().
TEST(Profile, RegionsCarryPerfEventCountsWhileARuntimeCounts) {
  if (!strata::profile::k_enabled) GTEST_SKIP() << "built without STRATA_WITH_LIKWID: regions compile to nothing";
  strata::config c = strata::test::workers(2);
  c.perf_counters = true;
  strata::runtime rt{c};
  if (!rt.stats().workers[0].has_counter("perf.page_faults")) {
    GTEST_SKIP() << "the kernel refuses perf_event here (see perf_unavailable)";
  }
  strata::parallel_for(rt, 0, 2, 1, [](std::size_t, std::size_t) {
    strata::profile::region r{"test.faults"};
    std::vector<char> fresh(4u << 20);
    for (std::size_t i = 0; i < fresh.size(); i += 4096) fresh[i] = 1;
    volatile char sink = fresh[fresh.size() / 2];
    (void)sink;
  });
  std::uint64_t faults = 0;
  for (const auto& rc : strata::profile::counts()) {
    if (rc.name != "test.faults") continue;
    EXPECT_EQ(rc.entries, 2u);
    for (const auto& [name, value] : rc.perf) {
      if (name == "perf.page_faults") faults = value;
    }
  }
  EXPECT_GE(faults, 2u * 900u) << "two regions touched 1024 fresh pages each";
  const std::string j = rt.stats().to_json();
  EXPECT_NE(j.find("\"regions\""), std::string::npos);
  EXPECT_NE(j.find("\"test.faults\""), std::string::npos);
  std::printf("[ perf     ] region test.faults: %llu page faults in 2 entries\n",
              static_cast<unsigned long long>(faults));
}

}  // namespace
