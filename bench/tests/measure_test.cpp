#include "harness/measure.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace strata_bench {
namespace {

int g_runs = 0;  // runs of the fake benchmark's repetition, warm-up included

benchmark fake(prepare_fn serial) {
  benchmark b{"fake", "x=1", "a fake benchmark", {}};
  b.prepare[static_cast<std::size_t>(runtime_id::serial)] = serial;
  return b;
}

TEST(Measure, WarmUpThenTimedRunsAllVerified) {
  g_runs = 0;
  const benchmark b = fake([](unsigned) -> repetition {
    return [] {
      ++g_runs;
      return verdict{};
    };
  });
  const record r = measure(b, runtime_id::serial, 1, 3);
  EXPECT_EQ(g_runs, 1 + 2 * 3);  // a short run: each timed run follows an untimed one
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.timed);
  EXPECT_EQ(r.reps, 3U);
  EXPECT_LE(r.min_s, r.median_s);
  EXPECT_LE(r.median_s, r.max_s);
  EXPECT_EQ(r.bench, "fake");
  EXPECT_EQ(r.params, "x=1");
  EXPECT_EQ(r.runtime, "serial");
}

TEST(Measure, WrongAnswerFailsAndStops) {
  g_runs = 0;
  const benchmark b = fake([](unsigned) -> repetition {
    return [] { return ++g_runs == 5 ? expect_equal("answer", 41, 42) : verdict{}; };
  });
  const record r = measure(b, runtime_id::serial, 1, 5);
  EXPECT_EQ(g_runs, 5);  // warm-up, untimed, timed 1, untimed, timed 2
  EXPECT_EQ(r.check, "FAIL: answer = 41, expected 42 (timed run 2 of 5)");
  EXPECT_EQ(r.reps, 2U);  // the failing run was timed too
  EXPECT_TRUE(r.timed);
}

TEST(Measure, ALongRunGetsNoUntimedRunBeforeItsTimedOnes) {
  g_runs = 0;
  const benchmark b = fake([](unsigned) -> repetition {
    return [] {
      ++g_runs;
      std::this_thread::sleep_for(std::chrono::milliseconds(110));  // over the 0.1 s limit
      return verdict{};
    };
  });
  const record r = measure(b, runtime_id::serial, 1, 2);
  EXPECT_EQ(g_runs, 1 + 2);
  EXPECT_TRUE(r.ok());
}

TEST(Measure, SetupAndRunExceptionsAreFailures) {
  const benchmark setup = fake([](unsigned) -> repetition { throw std::runtime_error("no workers"); });
  const record s = measure(setup, runtime_id::serial, 1, 5);
  EXPECT_EQ(s.check, "FAIL: setup: no workers");
  EXPECT_FALSE(s.timed);

  const benchmark run = fake([](unsigned) -> repetition {
    return []() -> verdict { throw std::runtime_error("boom"); };
  });
  EXPECT_EQ(measure(run, runtime_id::serial, 1, 5).check, "FAIL: exception: boom (warm-up run)");

  EXPECT_EQ(measure(run, runtime_id::tbb, 2, 5).check, "FAIL: no tbb version in this binary");
}

TEST(Measure, RateIsTheMedianOfWorkOverTime) {
  benchmark b = fake([](unsigned) -> repetition {
    return [] {
      verdict v;
      v.work = 2.0;
      return v;
    };
  });
  EXPECT_FALSE(measure(b, runtime_id::serial, 1, 3).has_rate());  // no unit: no rate

  b.rate_unit = "GB/s";
  const record r = measure(b, runtime_id::serial, 1, 3);
  ASSERT_TRUE(r.has_rate());
  EXPECT_EQ(r.rate_unit, "GB/s");
  EXPECT_GE(r.rate, 2.0 / r.max_s * 0.999);
  EXPECT_LE(r.rate, 2.0 / r.min_s * 1.001);

  const benchmark failing = fake([](unsigned) -> repetition {
    return []() -> verdict { throw std::runtime_error("boom"); };
  });
  benchmark failing_rated = failing;
  failing_rated.rate_unit = "GB/s";
  EXPECT_FALSE(measure(failing_rated, runtime_id::serial, 1, 3).has_rate());  // no timed run
}

repetition ok_run(unsigned) {
  return [] { return verdict{}; };
}

TEST(Versions, DefaultThenVariantsOfThatRuntime) {
  static const variant k_variants[] = {
      {runtime_id::strata, "placement=a", ok_run},
      {runtime_id::serial, "placement=s", ok_run},
      {runtime_id::strata, "placement=missing", nullptr},
      {runtime_id::strata, "placement=b", ok_run},
  };
  benchmark b = fake(ok_run);
  b.variants = k_variants;
  b.params_as_run = [] { return std::string("n=7"); };

  const std::vector<version> serial = versions_of(b, runtime_id::serial);
  ASSERT_EQ(serial.size(), 2U);
  EXPECT_EQ(serial[0].params, "n=7");
  EXPECT_EQ(serial[1].params, "n=7 placement=s");

  const std::vector<version> strata = versions_of(b, runtime_id::strata);
  ASSERT_EQ(strata.size(), 2U);  // no default, the null variant left out
  EXPECT_EQ(strata[0].params, "n=7 placement=a");
  EXPECT_EQ(strata[1].params, "n=7 placement=b");
  EXPECT_TRUE(versions_of(b, runtime_id::tbb).empty());

  const record r = measure(b, runtime_id::strata, strata[1], 2, 1);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.params, "n=7 placement=b");
  EXPECT_EQ(r.runtime, "strata");
  EXPECT_EQ(blank_record(b, runtime_id::serial, 1).params, "n=7");
}

TEST(Versions, MinThreadsTravelsWithTheVariant) {
  static const variant k_variants[] = {
      {runtime_id::strata, "actors=same-worker", ok_run},
      {runtime_id::strata, "actors=cross-worker", ok_run, 2},
  };
  benchmark b = fake(ok_run);
  b.variants = k_variants;
  const std::vector<version> strata = versions_of(b, runtime_id::strata);
  ASSERT_EQ(strata.size(), 2U);
  EXPECT_EQ(strata[0].min_threads, 1U);
  EXPECT_EQ(strata[1].min_threads, 2U);
  EXPECT_EQ(versions_of(b, runtime_id::serial).at(0).min_threads, 1U);
}

TEST(RuntimeSet, TaskAndActorRuntimes) {
  EXPECT_TRUE(k_task_runtimes.has(runtime_id::tbb));
  EXPECT_TRUE(k_task_runtimes.has(runtime_id::omp_llvm));
  EXPECT_FALSE(k_task_runtimes.has(runtime_id::caf));
  EXPECT_TRUE(k_actor_runtimes.has(runtime_id::serial));
  EXPECT_TRUE(k_actor_runtimes.has(runtime_id::strata));
  EXPECT_TRUE(k_actor_runtimes.has(runtime_id::caf));
  EXPECT_FALSE(k_actor_runtimes.has(runtime_id::omp));
  EXPECT_TRUE(fake(ok_run).runtimes.has(runtime_id::tbb));  // the default: task runtimes
  EXPECT_FALSE(runtime_set{}.has(runtime_id::serial));
}


// The group's log: "p" prepare, "r" run, "t" teardown, then the
// configuration's letter (its thread count: 1 -> a, 2 -> b, 3 -> c).
std::vector<std::string> g_log;

repetition logged(unsigned threads) {
  const std::string who(1, static_cast<char>('a' + threads - 1));
  g_log.push_back("p" + who);
  struct teardown {
    std::string who;
    ~teardown() { g_log.push_back("t" + who); }
  };
  auto t = std::make_shared<teardown>();
  t->who = who;
  return [who, t] {
    g_log.push_back("r" + who);
    return verdict{};
  };
}

TEST(Measure, AGroupIsPreparedThenRunsInterleavedThenTornDown) {
  g_log.clear();
  const benchmark b = fake(&logged);
  const version v{"x=1", &logged};
  const std::vector<configuration> group{{runtime_id::serial, v, 1},
                                         {runtime_id::serial, v, 2},
                                         {runtime_id::serial, v, 3}};
  int before_calls = 0;
  const std::vector<record> out = measure_group(b, group, 2, [&before_calls](runtime_id) { ++before_calls; });
  // Warm-up round a b c, then each round starts one further along, in
  // alternating directions (a c b, then c a b); these runs are short, so
  // each timed run follows an untimed one.
  const std::vector<std::string> want{"pa", "pb", "pc", "ra", "rb", "rc", "ra", "ra", "rc", "rc", "rb", "rb",
                                      "rc", "rc", "ra", "ra", "rb", "rb", "ta", "tb", "tc"};
  EXPECT_EQ(g_log, want);
  EXPECT_EQ(before_calls, 3 + 9);  // before each prepare and each configuration's turn
  ASSERT_EQ(out.size(), 3U);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_TRUE(out[i].ok());
    EXPECT_EQ(out[i].reps, 2U);
    EXPECT_EQ(out[i].threads, i + 1);
  }
}

TEST(Measure, AnEmptyRepetitionIsASetupFailure) {
  const benchmark b = fake([](unsigned) -> repetition { return {}; });
  const record r = measure(b, runtime_id::serial, 1, 3);
  EXPECT_EQ(r.check, "FAIL: setup: the prepare function returned no repetition");
  EXPECT_FALSE(r.timed);
}

TEST(Measure, EveryConfigurationOfAGroupIsPrimedAlike) {
  g_runs = 0;
  g_log.clear();
  const benchmark b = fake(&logged);
  const version slow{"x=2", [](unsigned) -> repetition {
                       return [] {
                         ++g_runs;
                         std::this_thread::sleep_for(std::chrono::milliseconds(110));  // over the 0.1 s limit
                         return verdict{};
                       };
                     }};
  const std::vector<record> out =
      measure_group(b, {{runtime_id::serial, version{"x=1", &logged}, 1}, {runtime_id::serial, slow, 1}}, 2);
  EXPECT_EQ(g_runs, 1 + 2 * 2) << "the long configuration is primed too, because its group mate is short";
  ASSERT_EQ(out.size(), 2U);
  EXPECT_TRUE(out[0].ok());
  EXPECT_TRUE(out[1].ok());
}

TEST(Measure, AFailingConfigurationStopsAloneInItsGroup) {
  g_runs = 0;
  g_log.clear();
  const benchmark b = fake(&logged);
  const version ok{"x=1", &logged};
  const version wrong{"x=2", [](unsigned) -> repetition {
                        return [] { return ++g_runs == 2 ? expect_equal("answer", 41, 42) : verdict{}; };
                      }};
  const version missing{"x=3", nullptr};
  const std::vector<record> out =
      measure_group(b, {{runtime_id::serial, ok, 1}, {runtime_id::serial, wrong, 1}, {runtime_id::tbb, missing, 2}}, 3);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_TRUE(out[0].ok());
  EXPECT_EQ(out[0].reps, 3U);
  EXPECT_EQ(out[1].check, "FAIL: answer = 41, expected 42 (untimed run before timed run 1 of 3)");
  EXPECT_EQ(g_runs, 2);
  EXPECT_EQ(out[1].params, "x=2");
  EXPECT_EQ(out[2].check, "FAIL: no tbb version in this binary");
  EXPECT_FALSE(out[2].timed);
}

}  // namespace
}  // namespace strata_bench
