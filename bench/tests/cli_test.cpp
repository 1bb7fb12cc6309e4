#include "harness/cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata_bench {
namespace {

options parse(std::vector<std::string> args, unsigned cpus = 4) {
  args.insert(args.begin(), "strata-bench");
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  return parse_cli(static_cast<int>(argv.size()), argv.data(), cpus);
}

TEST(ThreadList, ListsRangesAndDuplicates) {
  EXPECT_EQ(parse_thread_list("1,2"), (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(parse_thread_list("1-4"), (std::vector<unsigned>{1, 2, 3, 4}));
  EXPECT_EQ(parse_thread_list("8,1-3,2"), (std::vector<unsigned>{8, 1, 2, 3}));
  EXPECT_EQ(parse_thread_list("4096"), (std::vector<unsigned>{4096}));
}

class BadThreadList : public testing::TestWithParam<const char*> {};

TEST_P(BadThreadList, NamesTheArgumentAndTheAcceptedForm) {
  try {
    parse_thread_list(GetParam());
    FAIL() << "accepted " << GetParam();
  } catch (const cli_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--threads '" + std::string(GetParam()) + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("accepted:"), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Cli, BadThreadList,
                         testing::Values("", "0", "-1", "1-", "-3", "3-1", "1,,2", "a", "1.5",
                                         "4097", "1-99999", " 1", "+2"),
                         [](const testing::TestParamInfo<const char*>& p) {
                           return "case_" + std::to_string(p.index);
                         });

TEST(RuntimeList, KnownNamesInOrderGiven) {
  EXPECT_EQ(parse_runtime_list("tbb,serial,tbb"),
            (std::vector<runtime_id>{runtime_id::tbb, runtime_id::serial}));
  EXPECT_EQ(parse_runtime_list("omp-llvm"), (std::vector<runtime_id>{runtime_id::omp_llvm}));
  EXPECT_EQ(parse_runtime_list("caf,strata"), (std::vector<runtime_id>{runtime_id::caf, runtime_id::strata}));
  EXPECT_THROW(parse_runtime_list("openmp"), cli_error);
  EXPECT_THROW(parse_runtime_list("serial,"), cli_error);
}

TEST(Options, Defaults) {
  const options o = parse({}, 3);
  EXPECT_EQ(o.threads, (std::vector<unsigned>{1, 2, 3}));
  EXPECT_EQ(o.runtimes.size(), k_runtime_count);
  EXPECT_FALSE(o.runtimes_given);
  EXPECT_EQ(o.reps, 5U);
  EXPECT_FALSE(o.filter.has_value());
  EXPECT_TRUE(o.json_path.empty());
}

TEST(Options, EveryFlagBothSpellings) {
  const options o = parse({"--filter", "uts", "--threads=2", "--runtimes", "serial,omp", "--reps=3",
                           "--json", "out.json", "--list"});
  ASSERT_TRUE(o.filter.has_value());
  EXPECT_TRUE(std::regex_search("uts-t1", *o.filter));
  EXPECT_FALSE(std::regex_search("fib", *o.filter));
  EXPECT_EQ(o.threads, (std::vector<unsigned>{2}));
  EXPECT_EQ(o.runtimes, (std::vector<runtime_id>{runtime_id::serial, runtime_id::omp}));
  EXPECT_TRUE(o.runtimes_given);
  EXPECT_EQ(o.reps, 3U);
  EXPECT_EQ(o.json_path, "out.json");
  EXPECT_TRUE(o.list);
}

TEST(Options, PlacementReport) {
  const options o = parse({"--placement-report", "--n", "4194304", "--threads", "8", "--json=r.json"});
  EXPECT_TRUE(o.placement_report);
  EXPECT_EQ(o.n, std::size_t{4194304});
  EXPECT_TRUE(o.threads_given);
  EXPECT_EQ(o.threads, (std::vector<unsigned>{8}));
  EXPECT_EQ(o.json_path, "r.json");
  EXPECT_EQ(parse({"--placement-report", "--n=17179869184"}).n, std::size_t{1} << 34);  // beyond 32 bits

  EXPECT_FALSE(parse({}).threads_given);
  EXPECT_THROW(parse({"--n", "1024"}), cli_error);  // report only
  EXPECT_THROW(parse({"--placement-report", "--n", "0"}), cli_error);
  EXPECT_THROW(parse({"--placement-report", "--n", "17179869185"}), cli_error);
  EXPECT_THROW(parse({"--placement-report", "--n", "4k"}), cli_error);
  EXPECT_THROW(parse({"--placement-report", "--filter", "stream"}), cli_error);
  EXPECT_THROW(parse({"--placement-report", "--reps", "3"}), cli_error);
  EXPECT_THROW(parse({"--placement-report=yes"}), cli_error);
}

TEST(Options, Rejected) {
  EXPECT_THROW(parse({"--reps", "0"}), cli_error);
  EXPECT_THROW(parse({"--reps", "100001"}), cli_error);
  EXPECT_THROW(parse({"--reps"}), cli_error);
  EXPECT_THROW(parse({"--filter", "[a-"}), cli_error);
  EXPECT_THROW(parse({"--json", ""}), cli_error);
  EXPECT_THROW(parse({"--list=1"}), cli_error);
  EXPECT_THROW(parse({"fib"}), cli_error);
}

}  // namespace
}  // namespace strata_bench
