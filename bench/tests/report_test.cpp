#include "harness/report.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace strata_bench {
namespace {

record sample() {
  record r;
  r.bench = "fib";
  r.params = "n=30";
  r.runtime = "omp-llvm";
  r.threads = 2;
  r.timed = true;
  r.median_s = 0.123456789012345;
  r.min_s = 0.1;
  r.max_s = 0.2;
  r.reps = 5;
  r.check = "ok";
  return r;
}

TEST(Record, HelperLineRoundTrips) {
  record r = sample();
  r.check = "FAIL: a\ttab and a\nnewline";
  const std::string line = encode_record(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const std::optional<record> back = decode_record(line);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->bench, r.bench);
  EXPECT_EQ(back->params, r.params);
  EXPECT_EQ(back->runtime, r.runtime);
  EXPECT_EQ(back->threads, r.threads);
  EXPECT_TRUE(back->timed);
  EXPECT_EQ(back->median_s, r.median_s);  // 17 digits: exact
  EXPECT_EQ(back->min_s, r.min_s);
  EXPECT_EQ(back->max_s, r.max_s);
  EXPECT_EQ(back->reps, r.reps);
  EXPECT_EQ(back->check, "FAIL: a tab and a newline");
  EXPECT_FALSE(back->has_rate());
  EXPECT_FALSE(decode_record("some other output").has_value());

  r.rate = 41.123456789012345;
  r.rate_unit = "GB/s";
  const std::optional<record> rated = decode_record(encode_record(r));
  ASSERT_TRUE(rated.has_value());
  EXPECT_EQ(rated->rate, r.rate);
  EXPECT_EQ(rated->rate_unit, "GB/s");
}

TEST(Json, OneObjectPerRecordEscapedAndNullWhenUntimed) {
  record bad = sample();
  bad.timed = false;
  bad.reps = 0;
  bad.check = "FAIL: setup: \"quoted\" \\ path";
  std::ostringstream out;
  write_json(out, {sample(), bad});
  const std::string json = out.str();
  EXPECT_NE(json.find(R"({"bench": "fib", "runtime": "omp-llvm", "threads": 2, "params": "n=30", )"
                      R"("median_s": 0.123456789, "min_s": 0.1, "max_s": 0.2, "reps": 5, "check": "ok"})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("median_s": null, "min_s": null, "max_s": null, "reps": 0, )"
                      R"("check": "FAIL: setup: \"quoted\" \\ path"})"),
            std::string::npos)
      << json;
  EXPECT_EQ(json.front(), '[');
  EXPECT_EQ(json.substr(json.size() - 2), "]\n");
  EXPECT_EQ(json.find("\"rate\""), std::string::npos);  // optional: only records with a rate

  record rated = sample();
  rated.rate = 41.5;
  rated.rate_unit = "GB/s";
  std::ostringstream with_rate;
  write_json(with_rate, {rated});
  EXPECT_NE(with_rate.str().find(R"("check": "ok", "rate": 41.5, "rate_unit": "GB/s"})"), std::string::npos)
      << with_rate.str();
}

TEST(Table, SpeedupAgainstSerialOfTheSameBench) {
  record serial = sample();
  serial.runtime = "serial";
  serial.threads = 1;
  serial.median_s = 0.2;
  record par = sample();
  par.median_s = 0.1;
  std::ostringstream out;
  print_table(out, {serial, par});
  const std::string table = out.str();
  EXPECT_NE(table.find("vs serial"), std::string::npos);
  EXPECT_NE(table.find("1.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("2.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("rate"), std::string::npos) << table;
}

TEST(Table, RateWithItsUnit) {
  record r = sample();
  r.rate = 41.3;
  r.rate_unit = "GB/s";
  std::ostringstream out;
  print_table(out, {r, sample()});
  EXPECT_NE(out.str().find("41.3 GB/s"), std::string::npos) << out.str();
}

TEST(Table, SmallRatesKeepTwoDecimals) {
  record r = sample();
  r.rate = 0.1104;
  r.rate_unit = "Mmsg/s";
  std::ostringstream out;
  print_table(out, {r});
  EXPECT_NE(out.str().find("0.11 Mmsg/s"), std::string::npos) << out.str();
  EXPECT_NE(progress_line(r).find("0.11 Mmsg/s"), std::string::npos) << progress_line(r);
}

// Two records of one benchmark and runtime differ in their progress lines by
// their params (fib's api=task_group and api=parallel_invoke).
TEST(Progress, TheLineNamesTheRecordsParams) {
  record a = sample();
  record b = sample();
  a.params = "n=30 api=task_group";
  b.params = "n=30 api=parallel_invoke";
  EXPECT_NE(progress_line(a), progress_line(b));
  EXPECT_NE(progress_line(a).find("[n=30 api=task_group]"), std::string::npos) << progress_line(a);
}

}  // namespace
}  // namespace strata_bench
