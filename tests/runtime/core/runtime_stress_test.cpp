// Runtime stress: exact counts with tasks from a task, a spawn tree and
// threads outside at once; lifecycle churn against racing submitters.
// Parking, task groups and parallel_invoke have stress files of their own
// (parking_stress_test, task_group_stress_test, invoke_stress_test). Every
// test has a deadline.
#include <gtest/gtest.h>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "scale.hpp"
#include "runtime_config.hpp"

namespace {

using strata::test::scaled;

using strata::test::workers;

// 10^7 flat detached tasks from a task, plus a spawn tree, plus two external
// submitters at the same time: every task runs exactly once.
TEST(RuntimeStress, FlatTasksTreeAndExternalSubmittersExactlyOnce) {
  strata::runtime rt{workers(2)};
  const std::size_t flat = scaled(10'000'000);
  const std::size_t external_each = scaled(200'000);
  auto hits = std::make_unique<std::atomic<std::uint8_t>[]>(flat);
  std::atomic<std::size_t> tree_nodes{0}, external_runs{0};

  std::function<void(int)> tree = [&](int depth) {
    tree_nodes.fetch_add(1, std::memory_order_relaxed);
    if (depth == 0) return;
    strata::task_group g;
    g.run([&, depth] { tree(depth - 1); });
    g.run([&, depth] { tree(depth - 1); });
    g.wait();
  };
  std::vector<std::thread> submitters;
  for (int s = 0; s < 2; ++s) {
    submitters.emplace_back([&] {
      for (std::size_t i = 0; i < external_each; ++i) rt.spawn([&] { external_runs.fetch_add(1); });
    });
  }
  auto root = rt.submit([&] {
    for (std::size_t i = 0; i < flat; ++i) {
      strata::this_runtime()->spawn([&hits, i] { hits[i].fetch_add(1, std::memory_order_relaxed); });
    }
    tree(16);
  });
  root.get();
  for (auto& t : submitters) t.join();
  rt.wait_idle();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < flat; ++i) bad += hits[i].load() != 1;
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(tree_nodes.load(), (1u << 17) - 1);
  EXPECT_EQ(external_runs.load(), 2 * external_each);
  const auto s = rt.stats();
  EXPECT_EQ(s.total_executed(), flat + ((1u << 17) - 2) + 1 + 2 * external_each);
}

// Create and destroy runtimes with tasks still pending and submitters racing
// shutdown: every accepted task runs, every rejected submit throws.
TEST(RuntimeStress, LifecycleChurn) {
  const std::size_t cycles = scaled(1000);
  std::size_t rejected_total = 0;
  for (std::size_t c = 0; c < cycles; ++c) {
    std::atomic<std::size_t> accepted{0}, ran{0}, rejected{0};
    {
      strata::runtime rt{workers(2)};
      for (int i = 0; i < 20; ++i) {
        rt.spawn([&] { ran++; });
        accepted++;
      }
      std::atomic<bool> stop{false};
      std::thread racer([&] {
        while (!stop.load()) {
          try {
            rt.spawn([&] { ran++; });
            accepted++;
          } catch (const strata::runtime_error&) {
            rejected++;
            break;
          }
        }
      });
      rt.shutdown();
      stop = true;
      racer.join();
      EXPECT_EQ(ran.load(), accepted.load()) << "cycle " << c;
    }
    rejected_total += rejected.load();
  }
  EXPECT_GT(rejected_total, 0u) << "no submit ever raced shutdown: the test tested nothing";
}

}  // namespace
