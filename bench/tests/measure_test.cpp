#include "harness/measure.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

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
  EXPECT_EQ(g_runs, 4);
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
    return [] { return ++g_runs == 3 ? expect_equal("answer", 41, 42) : verdict{}; };
  });
  const record r = measure(b, runtime_id::serial, 1, 5);
  EXPECT_EQ(g_runs, 3);
  EXPECT_EQ(r.check, "FAIL: answer = 41, expected 42 (timed run 2 of 5)");
  EXPECT_EQ(r.reps, 2U);
  EXPECT_TRUE(r.timed);
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

}  // namespace
}  // namespace strata_bench
