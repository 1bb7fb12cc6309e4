// Task group stress: exceptions in 10^4 groups, each rethrown exactly
// once; a chain of 10^4 nested waits.
#include <gtest/gtest.h>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include <cstddef>
#include <functional>
#include <stdexcept>

#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using strata::test::scaled;
using strata::test::workers;

// 10^4 groups, 1% of their tasks throw: each failing wait rethrows exactly
// once, the others do not, and the runtime keeps working.
TEST(TaskGroupStress, ExceptionsInGroups) {
  strata::runtime rt{workers(2)};
  const std::size_t groups = scaled(10'000);
  std::size_t thrown = 0, expected = 0;
  rt.submit([&] {
      for (std::size_t g = 0; g < groups; ++g) {
        const bool fails = g % 100 == 37;
        expected += fails;
        strata::task_group tg;
        for (int t = 0; t < 8; ++t) {
          tg.run([fails, t] {
            if (fails && t == 5) throw std::runtime_error("expected failure");
          });
        }
        try {
          tg.wait();
        } catch (const std::runtime_error&) {
          ++thrown;
        }
        tg.wait();  // a second wait does not rethrow
      }
    }).get();
  EXPECT_EQ(thrown, expected);
  EXPECT_EQ(rt.submit([] { return 5; }).get(), 5);
}

// A chain of 10^4 tasks, each waiting on a group holding the next one.
TEST(TaskGroupStress, NestedWaitsDepth) {
  strata::runtime rt{workers(2)};
  const int depth = 10'000;
  std::function<int(int)> chain = [&](int d) -> int {
    if (d == 0) return 0;
    int below = 0;
    strata::task_group g;
    g.run([&] { below = chain(d - 1); });
    g.wait();
    return below + 1;
  };
  EXPECT_EQ(rt.submit([&] { return chain(depth); }).get(), depth);
}

}  // namespace
