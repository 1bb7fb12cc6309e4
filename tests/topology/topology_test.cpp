// Discovery and descriptions: counts, ids, distances and limits on synthetic
// and XML machines, the real machine, and bad descriptions.
#include <gtest/gtest.h>
#include <strata/topology/topology.hpp>

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "env_guard.hpp"
#include "json_reader.hpp"

namespace {

using strata::config_error;
using strata::topology;

TEST(Synthetic, TwoSocketSmtCounts) {
  const auto t = topology::synthetic("pack:2 numa:2 l3:1 core:4 pu:2");
  EXPECT_FALSE(t.is_this_system());
  EXPECT_EQ(t.num_packages(), 2u);
  EXPECT_EQ(t.num_numa_nodes(), 4u);
  EXPECT_EQ(t.num_l3(), 4u);
  EXPECT_EQ(t.num_cores(), 16u);
  EXPECT_EQ(t.num_pus(), 32u);
  // Core 5: package 0, NUMA node 1, L3 1, PUs 10 and 11.
  const auto& c = t.cores()[5];
  EXPECT_EQ(c.package, 0);
  EXPECT_EQ(c.numa_node, 1);
  EXPECT_EQ(c.l3, 1);
  EXPECT_EQ(c.pus, (std::vector<int>{10, 11}));
  ASSERT_NE(t.find_pu(11), nullptr);
  EXPECT_EQ(t.find_pu(11)->core, 5);
  EXPECT_EQ(t.find_pu(32), nullptr);
  EXPECT_EQ(t.packages()[1].numa_nodes, (std::vector<int>{2, 3}));
  EXPECT_FALSE(t.distances_from_hwloc());
  EXPECT_EQ(t.numa_distance(0, 0), 10);
  EXPECT_EQ(t.numa_distance(0, 3), 20);
  EXPECT_FALSE(t.bind_current_thread(0)) << "binding must be skipped, never faked, on a synthetic machine";
}

TEST(Synthetic, FourSocketsNoL3) {
  const auto t = topology::synthetic("pack:4 numa:1 core:8 pu:1");
  EXPECT_EQ(t.num_packages(), 4u);
  EXPECT_EQ(t.num_numa_nodes(), 4u);
  EXPECT_EQ(t.num_l3(), 0u);
  EXPECT_EQ(t.num_cores(), 32u);
  EXPECT_EQ(t.cores()[31].l3, -1);
  EXPECT_EQ(t.cores()[31].numa_node, 3);
}

TEST(Synthetic, NoCoreLevelTreatsPusAsCores) {
  const auto t = topology::synthetic("pack:2 pu:3");
  EXPECT_EQ(t.num_cores(), 6u);
  EXPECT_EQ(t.num_pus(), 6u);
  EXPECT_EQ(t.cores()[4].package, 1);
}

TEST(Synthetic, BadDescriptionsAreErrors) {
  for (const char* bad : {"", "  ", "pack:x", "pack:2 core:", "banana:3", "pack:0 core:1", "pack:2 core:2 pu:2 pu:2"}) {
    try {
      (void)topology::synthetic(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const config_error& e) {
      EXPECT_NE(std::string(e.what()).find("synthetic"), std::string::npos) << e.what();
    }
  }
}

// Each description is a config_error whose text holds `reason`.
void expect_refused(std::initializer_list<const char*> descriptions, const char* reason) {
  for (const char* d : descriptions) {
    try {
      (void)topology::synthetic(d);
      ADD_FAILURE() << "accepted '" << d << "'";
    } catch (const config_error& e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
}

// hwloc builds every object of a description before it checks anything:
// 52705288 PUs kept it busy for minutes (tests/fuzz/regressions/env). Over
// 16384 PUs is refused before hwloc sees it, however the count is spelt, and
// so is a level of more than 1024 objects under one parent.
TEST(Synthetic, HugeDescriptionsAreRefusedAtOnce) {
  expect_refused({"052705288", "pack:256 core:256 pu:2", "pack:2(memory=1GB) core:99999999 pu:1", "pu:16385",
                  "pack:4294967296 pu:4294967296 pu:4294967296"},
                 "accepted: at most 16384 PUs");
  EXPECT_EQ(topology::synthetic("pack:4 core:512 pu:2").num_pus(), 4096u);
  // Few PUs, but one level so wide that hwloc takes seconds to build it
  // (17 s for "8527"; tests/fuzz/regressions/{env,topology}/timeout-*-level).
  expect_refused({"8527", "pack:1 core:4000 pu:3", "pack:1 nu\t000000:1 core\xff:4000 pu:3", "pu:1025", "4\n4096"},
                 "accepted: at most 1024 per level");
  // Counts as hwloc reads them: after the first ':' past a type, though a
  // '(' comes first (tests/fuzz/regressions/topology/timeout-paren-before-count),
  // and in base 0 (hexadecimal, octal).
  expect_refused({"pack:1 nu\t000000:1 core\xff(:4000 pu:3", "pack:1 core(:4000 pu:3", "pack:1 core:0x800 pu:1",
                  "pack:1 core:04001 pu:1"},
                 "accepted: at most 1024 per level");
  EXPECT_EQ(topology::synthetic("pu:1024").num_pus(), 1024u);
  EXPECT_EQ(topology::synthetic("pack:1 core:0x10 pu:2").num_pus(), 32u);
  EXPECT_EQ(topology::synthetic("pack:1 core:010 pu:1").num_pus(), 8u);
  // Levels narrow enough, but so many objects in wide groups that hwloc
  // takes seconds (11 s for the first, 4 s for the second).
  expect_refused({"pack:64 core:256 pu:1", "pack:8 core:512 pu:4", "pack:16\rpu:1024"}, "too costly for hwloc");
  EXPECT_EQ(topology::synthetic("pack:2(memory=1GB) core:4 pu:2").num_pus(), 16u);
}

TEST(Xml, AsymmetricMachineWithDisallowedCore) {
  const auto t = topology::from_xml(STRATA_TEST_DATA_DIR "/asymmetric.xml");
  EXPECT_FALSE(t.is_this_system());
  EXPECT_EQ(t.num_packages(), 2u);
  EXPECT_EQ(t.num_numa_nodes(), 2u);
  EXPECT_EQ(t.num_cores(), 5u) << "core 1 is disallowed in the XML";
  EXPECT_EQ(t.num_pus(), 10u);
  EXPECT_EQ(t.packages()[0].cores.size(), 2u);
  EXPECT_EQ(t.packages()[1].cores.size(), 3u);
  EXPECT_EQ(t.find_pu(2), nullptr);
  EXPECT_EQ(t.find_pu(3), nullptr);
  ASSERT_NE(t.find_pu(4), nullptr);
  EXPECT_EQ(t.find_pu(4)->core, 1);
  EXPECT_TRUE(t.distances_from_hwloc());
  EXPECT_EQ(t.numa_distance(0, 1), 21);
  EXPECT_EQ(t.numa_distance(1, 1), 10);
  EXPECT_EQ(strata::format_cpu_list(t.limits().allowed_pus), "0-1,4-11");
  EXPECT_EQ(strata::format_cpu_list(t.limits().machine_pus), "0-11");
}

TEST(Xml, MissingAndMalformedFilesAreErrors) {
  EXPECT_THROW((void)topology::from_xml(STRATA_TEST_DATA_DIR "/does-not-exist.xml"), config_error);
  EXPECT_THROW((void)topology::from_xml(STRATA_TEST_DATA_DIR "/malformed.xml"), config_error);
  EXPECT_THROW((void)topology::from_xml(STRATA_TEST_DATA_DIR), config_error) << "a directory is not a topology";
  EXPECT_THROW((void)topology::from_xml(""), config_error);
}

// A file on which hwloc's own import crashes (a Core with a cpuset and no
// complete_cpuset; found by tests/fuzz/topology_fuzz.cpp): a clear error,
// the program goes on.
TEST(Xml, AFileThatCrashesHwlocIsAnError) {
  try {
    (void)topology::from_xml(STRATA_TEST_DATA_DIR "/missing-complete-cpuset.xml");
    FAIL() << "accepted";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("hwloc crashed reading it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(topology::from_xml(STRATA_TEST_DATA_DIR "/asymmetric.xml").num_pus(), 10u) << "the next file loads";
}

TEST(Discover, RealMachine) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  const auto t = topology::discover();
  EXPECT_TRUE(t.is_this_system());
  EXPECT_GE(t.num_cores(), 1u);
  EXPECT_GE(t.num_pus(), t.num_cores());
  EXPECT_GE(t.num_numa_nodes(), 1u);
  EXPECT_EQ(t.limits().usable_pus.size(), t.num_pus());
  // Every usable PU is bound and allowed.
  for (int pu : t.limits().usable_pus) {
    EXPECT_NE(std::find(t.limits().allowed_pus.begin(), t.limits().allowed_pus.end(), pu), t.limits().allowed_pus.end());
    EXPECT_NE(std::find(t.limits().bound_pus.begin(), t.limits().bound_pus.end(), pu), t.limits().bound_pus.end());
  }
  // Binding is real here: pin to the first usable PU and read it back.
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const int pu = t.pus().back().os_index;
  EXPECT_TRUE(t.bind_current_thread(pu));
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(CPU_COUNT(&set), 1);
  EXPECT_TRUE(CPU_ISSET(static_cast<unsigned>(pu), &set));
  EXPECT_EQ(sched_getcpu(), pu);
  EXPECT_THROW((void)t.bind_current_thread(1 << 20), config_error);
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
}

// Under ctest's `taskset -c 1` run STRATA_EXPECT_USABLE names the PU; run
// plainly, the test binds this (single-threaded) process itself.
TEST(Discover, HonoursProcessBinding) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  std::string expect;
  if (const char* e = std::getenv("STRATA_EXPECT_USABLE")) {
    expect = e;
  } else {
    const int last = topology::discover().pus().back().os_index;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(static_cast<unsigned>(last), &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    expect = std::to_string(last);
  }
  const auto t = topology::discover();
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(strata::format_cpu_list(t.limits().usable_pus), expect);
  EXPECT_EQ(strata::format_cpu_list(t.limits().bound_pus), expect);
  EXPECT_EQ(t.num_pus(), 1u);
  EXPECT_EQ(t.num_cores(), 1u);
}

TEST(Discover, HwlocXmlFileFallbackIsDetected) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  g.set("HWLOC_XMLFILE", STRATA_TEST_DATA_DIR "/malformed.xml");
  try {
    (void)topology::discover();
    FAIL() << "a malformed HWLOC_XMLFILE must not fall back to the real machine silently";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("HWLOC_XMLFILE"), std::string::npos) << e.what();
  }
  g.set("HWLOC_XMLFILE", STRATA_TEST_DATA_DIR "/asymmetric.xml");
  const auto t = topology::discover();
  EXPECT_FALSE(t.is_this_system());
  EXPECT_EQ(t.num_cores(), 5u);
  g.unset("HWLOC_XMLFILE").set("HWLOC_SYNTHETIC", "pack:banana");
  EXPECT_THROW((void)topology::discover(), config_error);
  g.set("HWLOC_SYNTHETIC", "pack:3 core:2 pu:1");
  EXPECT_EQ(topology::discover().num_packages(), 3u);
}

TEST(Report, JsonHasTheMachine) {
  const auto t = topology::synthetic("pack:2 numa:2 l3:1 core:4 pu:2");
  const auto j = strata::test::json_reader::parse(t.to_json());
  EXPECT_EQ(j["packages"].size(), 2u);
  EXPECT_EQ(j["numa_nodes"].size(), 4u);
  EXPECT_EQ(j["cores"].size(), 16u);
  EXPECT_EQ(j["pus"].size(), 32u);
  ASSERT_EQ(j["distances"].size(), 4u);
  EXPECT_EQ(j["distances"][0].ints(), (std::vector<int>{10, 20, 20, 20}));
  EXPECT_EQ(j["pus"][31]["core"].as_int(), 15);
  const std::string d = t.describe();
  EXPECT_NE(d.find("Package 1"), std::string::npos);
  EXPECT_NE(d.find("Core 15: PU P#30 P#31"), std::string::npos) << d;
}

TEST(Report, CpuListFormatting) {
  EXPECT_EQ(strata::format_cpu_list({}), "(none)");
  EXPECT_EQ(strata::format_cpu_list({3, 0, 1, 2, 8}), "0-3,8");
  EXPECT_EQ(strata::format_cpu_list({5}), "5");
  EXPECT_EQ(strata::format_cpu_list({1, 3, 5}), "1,3,5");
}

TEST(Distance, OutOfRangeIsAnError) {
  const auto t = topology::synthetic("pack:2 core:1 pu:1");
  EXPECT_THROW((void)t.numa_distance(0, 1), config_error);
  EXPECT_THROW((void)t.numa_distance(-1, 0), config_error);
}

}  // namespace
