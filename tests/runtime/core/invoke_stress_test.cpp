// parallel_invoke stress: trees of 2^18 leaves under stealing, one leaf
// throwing per round; every leaf runs exactly once per round.
#include <gtest/gtest.h>
#include <strata/runtime/invoke.hpp>
#include <strata/runtime/runtime.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using strata::test::scaled;
using strata::test::workers;

// parallel_invoke trees under stealing: in every round one leaf throws; every
// leaf still runs exactly once (the other side of each join always runs)
// and the root's call rethrows that one exception.
void invoke_tree(std::atomic<std::uint8_t>* hits, std::size_t lo, std::size_t hi, std::size_t thrower) {
  if (hi - lo == 1) {
    hits[lo].fetch_add(1, std::memory_order_relaxed);
    if (lo == thrower) throw std::runtime_error("leaf " + std::to_string(lo));
    return;
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  strata::parallel_invoke([=] { invoke_tree(hits, mid, hi, thrower); }, [=] { invoke_tree(hits, lo, mid, thrower); });
}

TEST(InvokeStress, TreesExactlyOnceWithOneThrowingLeaf) {
  strata::runtime rt{workers(2)};
  const std::size_t leaves = scaled(1u << 18);
  const int rounds = 20;
  auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(leaves);
  for (int round = 0; round < rounds; ++round) {
    const std::size_t thrower = (static_cast<std::size_t>(round) * 7919u) % leaves;
    // Caught on the worker, so that the future carries a string: libstdc++'s
    // exception reference count is invisible to TSAN (not instrumented).
    const std::string caught = rt.submit([&] {
                                  try {
                                    invoke_tree(hits.get(), 0, leaves, thrower);
                                  } catch (const std::runtime_error& e) {
                                    return std::string(e.what());
                                  }
                                  return std::string("no exception");
                                }).get();
    EXPECT_EQ(caught, "leaf " + std::to_string(thrower)) << "round " << round;
  }
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < leaves; ++i) wrong += hits[i].load() != rounds;
  EXPECT_EQ(wrong, 0u) << "leaves not run exactly " << rounds << " times";
  EXPECT_GT(rt.stats().total_stolen(), 0u);
}

}  // namespace
