// The system refuses a service the runtime can live without, or one it
// cannot: mbind refused (one warning, plain memory), mbind failing otherwise
// (the allocation throws, its mapping is returned), perf_event_open refused
// (the runtime runs and says which counters and why, no descriptor left
// open), hwloc refusing an XML file or a load (a config_error naming the
// file or machine and the reason, no worker started).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <strata/strata.hpp>

#include "fault_support.hpp"
#include "runtime_config.hpp"

namespace {

using strata::fault::site;

const std::string k_xml = STRATA_TOPOLOGY_DATA_DIR "/machines/epyc7002-2s-nps4.xml";

long count(const std::string& text, const std::string& what) {
  long n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FaultSystem, MbindRefusedWarnsOnceAndHandsOutPlainMemory) {
  if (!strata::numa_binding_available()) GTEST_SKIP() << "no NUMA binding here: numa_alloc never calls mbind";
  const int node = strata::numa_allowed_nodes().front();
  strata::test::armed_fault f(site::mbind, EPERM, 0, 1000);
  testing::internal::CaptureStderr();
  std::vector<void*> blocks;
  for (int i = 0; i < 8; ++i) {
    void* p = strata::numa_allocate(std::size_t{1} << 20, strata::memory_placement::on(strata::numa_node{node}));
    std::memset(p, i, std::size_t{1} << 20);  // plain memory, usable
    blocks.push_back(p);
  }
  {
    std::vector<double, strata::numa_allocator<double>> v(
        1 << 18, 1.0, strata::numa_allocator<double>(strata::memory_placement::on(strata::numa_node{node})));
    double sum = 0;
    for (double x : v) sum += x;
    EXPECT_EQ(sum, double(1 << 18));
  }
  for (void* p : blocks) strata::numa_deallocate(p, std::size_t{1} << 20);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_GE(f.injected(), 8u);
  EXPECT_EQ(count(err, "NUMA binding is not available here"), 1) << err;
  EXPECT_NE(err.find(std::string("mbind refused: ") + std::strerror(EPERM)), std::string::npos) << err;
}

TEST(FaultSystem, MbindFailingOtherwiseThrowsAndReturnsTheMapping) {
  if (!strata::numa_binding_available()) GTEST_SKIP() << "no NUMA binding here: numa_alloc never calls mbind";
  const int node = strata::numa_allowed_nodes().front();
  const auto where = strata::memory_placement::on(strata::numa_node{node});
  const auto mapped = [&] { return strata::numa_stats().find_node(node)->bytes_mapped; };
  const std::uint64_t before = mapped();
  {
    strata::test::armed_fault f(site::mbind, ENOMEM);
    try {
      strata::numa_allocate(std::size_t{4} << 20, where);
      ADD_FAILURE() << "the allocation succeeded";
    } catch (const strata::numa_bad_alloc& e) {
      EXPECT_EQ(e.node(), node);
      EXPECT_EQ(e.size(), std::size_t{4} << 20);
      EXPECT_NE(std::string(e.what()).find(std::strerror(ENOMEM)), std::string::npos) << e.what();
    }
    EXPECT_EQ(f.injected(), 1u);
  }
  EXPECT_EQ(mapped(), before) << "the refused mapping was kept";
  void* p = strata::numa_allocate(std::size_t{4} << 20, where);  // and the next one works
  strata::numa_deallocate(p, std::size_t{4} << 20);
}

strata::config with_counters() {
  strata::config c = strata::test::workers(2);
  c.perf_counters = true;
  return c;
}

TEST(FaultSystem, PerfEventOpenRefusedTheRuntimeRunsAndSaysWhy) {
  const std::size_t fds_before = strata::test::fds_now();
  {
    strata::test::armed_fault f(site::perf_event_open, EACCES, 0, 1000);
    strata::runtime rt{with_counters()};
    EXPECT_EQ(rt.submit([] { return 7; }).get(), 7);
    const strata::runtime_stats s = rt.stats();
    EXPECT_EQ(s.unavailable_counters.size(), 6u);
    for (const auto& [name, why] : s.unavailable_counters) {
      EXPECT_NE(why.find(std::strerror(EACCES)), std::string::npos) << name << ": " << why;
      EXPECT_NE(why.find("perf_event_paranoid"), std::string::npos) << name << ": " << why;
    }
    for (const auto& w : s.workers) {
      for (const auto& [counter, value] : w.counters) {
        EXPECT_NE(counter.rfind("perf.", 0), 0u) << "a refused counter reported " << counter << " = " << value;
      }
    }
    EXPECT_GE(f.injected(), 6u);
  }
  EXPECT_EQ(strata::test::fds_now(), fds_before);
}

// Worker 1's first counter refused after worker 0's opened: worker 0's is
// closed again (one reason, the same event for every worker), no fd stays.
TEST(FaultSystem, PerfEventOpenRefusedForOneWorkerClosesTheOthers) {
  const std::size_t fds_before = strata::test::fds_now();
  {
    strata::test::armed_fault f(site::perf_event_open, EMFILE, 1, 1);
    strata::runtime rt{with_counters()};
    EXPECT_EQ(f.injected(), 1u);
    const strata::runtime_stats s = rt.stats();
    ASSERT_FALSE(s.unavailable_counters.empty());
    EXPECT_EQ(s.unavailable_counters.front().first, "context_switches");
    EXPECT_NE(s.unavailable_counters.front().second.find(std::strerror(EMFILE)), std::string::npos);
    for (const auto& w : s.workers) {
      for (const auto& [counter, value] : w.counters) EXPECT_NE(counter, "perf.context_switches");
    }
  }
  EXPECT_EQ(strata::test::fds_now(), fds_before);
}

TEST(FaultSystem, HwlocRefusingAnXmlFileIsAConfigErrorNamingIt) {
  for (site s : {site::hwloc_xml, site::hwloc_load}) {
    strata::test::armed_fault f(s, ENOMEM);
    try {
      (void)strata::topology::from_xml(k_xml);
      ADD_FAILURE() << strata::fault::name(s) << ": the file loaded";
    } catch (const strata::config_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(k_xml), std::string::npos) << what;
      EXPECT_NE(what.find(std::strerror(ENOMEM)), std::string::npos) << what;
      EXPECT_EQ(what.find("malformed"), std::string::npos) << "the file is fine; the system refused: " << what;
    }
    EXPECT_EQ(f.injected(), 1u) << strata::fault::name(s);
  }
  EXPECT_EQ(strata::topology::from_xml(k_xml).num_numa_nodes(), 8u);  // and it loads once hwloc may
}

TEST(FaultSystem, HwlocCannotLoadThisMachineTheRuntimeDoesNotStart) {
  const std::size_t threads_before = strata::test::threads_now();
  {
    strata::test::armed_fault f(site::hwloc_load, ENOMEM);
    try {
      strata::runtime rt{strata::test::workers(2)};
      ADD_FAILURE() << "the runtime started";
    } catch (const strata::config_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("hwloc could not load this machine"), std::string::npos) << what;
      EXPECT_NE(what.find(std::strerror(ENOMEM)), std::string::npos) << what;
    }
    EXPECT_EQ(f.injected(), 1u);
  }
  EXPECT_EQ(strata::test::threads_now(), threads_before);
  strata::runtime rt{strata::test::workers(2)};
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1);
}

}  // namespace
