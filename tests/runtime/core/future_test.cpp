// Futures of submitted tasks: the value from any thread, the exception the
// task threw, a value given once.
#include <gtest/gtest.h>
#include <strata/runtime/runtime.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime_config.hpp"

namespace {

using strata::test::workers;

TEST(Future, SubmitReturnsValueFromAnyThread) {
  strata::runtime rt{workers(2)};
  EXPECT_EQ(rt.num_workers(), 2u);
  EXPECT_EQ(rt.submit([] { return 42; }).get(), 42);
  std::vector<std::thread> ts;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    ts.emplace_back([&, i] { ok += rt.submit([i] { return i * 2; }).get() == i * 2; });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(ok.load(), 4);
}

TEST(Future, GivesItsValueOnce) {
  strata::runtime rt{workers(2)};
  auto v = rt.submit([] {});
  v.get();
  EXPECT_THROW(v.get(), strata::usage_error) << "a future gives its value once";
}

TEST(Future, CarriesTheTasksException) {
  strata::runtime rt{workers(2)};
  auto f = rt.submit([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_THROW(f.get(), std::runtime_error);
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1) << "the runtime keeps working";
}

}  // namespace
