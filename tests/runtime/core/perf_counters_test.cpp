// perf_event counters per worker (STRATA_PERF_COUNTERS, config.perf_counters):
// every event is either a counter on every worker or reported unavailable
// with a reason; the software events count what the workers did; a bad
// value of the variable is a clear error.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/task_group.hpp>

#include "env_guard.hpp"
#include "runtime_config.hpp"

namespace {

const std::vector<std::string> k_events{"context_switches", "cpu_migrations", "page_faults",
                                        "cycles",           "instructions",   "llc_misses"};

TEST(PerfCounters, EveryEventIsCountedOrSaysWhyNot) {
  strata::config c = strata::test::workers(2);
  c.perf_counters = true;
  strata::runtime rt{c};
  // Each worker touches 4 MiB of fresh memory: about a thousand page faults.
  strata::task_group g{rt};
  for (unsigned w = 0; w < rt.num_workers(); ++w) {
    g.run([] {
      std::vector<char> fresh(4u << 20);
      for (std::size_t i = 0; i < fresh.size(); i += 4096) fresh[i] = 1;
      volatile char sink = fresh[fresh.size() / 2];
      (void)sink;
    });
  }
  g.wait();
  const strata::runtime_stats s = rt.stats();
  std::uint64_t faults = 0;
  for (const std::string& e : k_events) {
    bool unavailable = false;
    for (const auto& [name, why] : s.unavailable_counters) {
      if (name == e) {
        unavailable = true;
        EXPECT_FALSE(why.empty()) << e;
        std::printf("[ perf     ] %s unavailable: %s\n", e.c_str(), why.c_str());
      }
    }
    for (const auto& w : s.workers) {
      EXPECT_NE(w.has_counter("perf." + e), unavailable) << e << " on worker " << w.worker;
    }
    if (!unavailable) {
      std::printf("[ perf     ] %s: %llu on worker 0\n", e.c_str(),
                  static_cast<unsigned long long>(s.workers[0].counter("perf." + e)));
    }
  }
  for (const auto& w : s.workers) faults += w.counter("perf.page_faults");
  // Page faults are a software event: every Linux kernel with perf_event
  // counts them (unless the kernel refuses perf_event altogether, said above).
  const bool have_faults = s.workers[0].has_counter("perf.page_faults");
  const std::string j = s.to_json();
  if (have_faults) {
    EXPECT_GE(faults, 1000u) << "two workers touched 4 MiB each";
    EXPECT_NE(j.find("\"perf.page_faults\""), std::string::npos);
  }
  if (!s.unavailable_counters.empty()) {
    EXPECT_NE(j.find("\"perf_unavailable\""), std::string::npos);
  }
}

TEST(PerfCounters, OffByDefaultAndTheVariableIsChecked) {
  {
    strata::runtime rt{strata::test::workers(1)};
    EXPECT_FALSE(rt.stats().workers[0].has_counter("perf.page_faults"));
    EXPECT_TRUE(rt.stats().unavailable_counters.empty());
  }
  strata::test::env_guard g;
  g.set("STRATA_PERF_COUNTERS", "maybe");
  try {
    (void)strata::runtime_config::from_env();
    ADD_FAILURE() << "no error";
  } catch (const strata::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_PERF_COUNTERS='maybe'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("accepted: 1, true, yes, on or 0, false, no, off"), std::string::npos)
        << e.what();
  }
  g.set("STRATA_PERF_COUNTERS", "1");
  EXPECT_TRUE(strata::runtime_config::from_env().perf_counters);
}

}  // namespace
