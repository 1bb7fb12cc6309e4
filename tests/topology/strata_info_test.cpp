// strata-info as a user runs it: exit codes, the JSON keys jobs consume, and
// the STRATA_* variables it honours.
#include <gtest/gtest.h>

#include <string>

#include "json_reader.hpp"
#include "run_command.hpp"

namespace {

using strata::test::json_reader;
using strata::test::run_command;

const std::string k_info = STRATA_INFO_PATH;
const std::string k_clean = "env -u STRATA_NUM_WORKERS -u STRATA_PLACES -u STRATA_PROC_BIND -u STRATA_TOPOLOGY "
                            "-u SLURM_CPUS_PER_TASK -u HWLOC_XMLFILE -u HWLOC_SYNTHETIC ";

TEST(StrataInfo, TwoSocketSyntheticJson) {
  const auto r = run_command(k_clean + "STRATA_TOPOLOGY='pack:2 numa:2 l3:1 core:4 pu:2' " + k_info + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = json_reader::parse(r.output);
  for (const char* k : {"packages", "numa_nodes", "cores", "pus", "distances"}) {
    EXPECT_TRUE(j["topology"].has(k)) << k;
  }
  EXPECT_EQ(j["topology"]["numa_nodes"].size(), 4u);
  ASSERT_EQ(j["placement"].size(), 16u);
  for (const char* k : {"worker", "pu", "core", "l3", "numa_node", "package"}) {
    EXPECT_TRUE(j["placement"][0].has(k)) << k;
  }
  ASSERT_EQ(j["tiers"].size(), 16u);
  EXPECT_EQ(j["tiers"][0][0].ints(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(j["tiers"][0][1].ints(), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(j["tiers"][0][2].ints(), (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
}

TEST(StrataInfo, BadValueExitsNonZeroNamingTheVariable) {
  const auto r = run_command(k_clean + "STRATA_NUM_WORKERS=4x " + k_info);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("STRATA_NUM_WORKERS='4x'"), std::string::npos) << r.output;
  const auto p = run_command(k_clean + "STRATA_PLACES='{0:4' " + k_info + " --json");
  EXPECT_EQ(p.status, 2);
  EXPECT_NE(p.output.find("STRATA_PLACES"), std::string::npos) << p.output;
  const auto a = run_command(k_info + " --bogus");
  EXPECT_EQ(a.status, 2);
  EXPECT_NE(a.output.find("usage"), std::string::npos);
}

TEST(StrataInfo, TextReportOnThisMachine) {
  const auto r = run_command(k_clean + k_info);
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* s : {"Machine (this system)", "NUMA distances", "strata placement:", "Steal tiers", "CPUs: machine",
                        "What decided this:"}) {
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  }
}

TEST(StrataInfo, HonoursTasksetAndSlurm) {
  const auto r = run_command(k_clean + "taskset -c 0 " + k_info + " --json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = json_reader::parse(r.output);
  ASSERT_EQ(j["placement"].size(), 1u);
  EXPECT_EQ(j["placement"][0]["pu"].as_int(), 0);
  const auto s = run_command(k_clean + "SLURM_CPUS_PER_TASK=1 SLURM_JOB_ID=7 " + k_info);
  ASSERT_EQ(s.status, 0) << s.output;
  EXPECT_NE(s.output.find("SLURM_CPUS_PER_TASK=1 limits the workers to 1"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("SLURM_JOB_ID=7"), std::string::npos) << s.output;
}

}  // namespace
