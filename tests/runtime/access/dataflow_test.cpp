// Dataflow mode: equal to serial execution on random graphs, a graph
// destroyed right after wait, exceptions, waits from inside a task, bad use.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <strata/access/dataflow.hpp>
#include <strata/runtime/runtime.hpp>

#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

// Dataflow: random graphs over a few integer cells; each task reads its
// `in` cells and updates its `out`/`inout` cells with a non-commutative
// function of them (mutexinoutset members add, which commutes). The result
// must equal running the tasks one by one in submission order.
struct op {
  std::vector<std::pair<int, strata::dep_mode>> deps;
  long k;
};

void apply(const op& o, std::vector<long>& cell) {
  long in_sum = 0;
  for (auto [c, m] : o.deps) {
    if (m == strata::dep_mode::in) in_sum += cell[static_cast<std::size_t>(c)];
  }
  for (auto [c, m] : o.deps) {
    auto& x = cell[static_cast<std::size_t>(c)];
    switch (m) {
      case strata::dep_mode::in: break;
      case strata::dep_mode::out: x = in_sum * 3 + o.k; break;
      case strata::dep_mode::inout: x = x * 2 - in_sum + o.k; break;
      case strata::dep_mode::mutexinoutset: x += o.k; break;
    }
  }
}

TEST(Dataflow, RandomGraphsEqualSerialExecution) {
  strata::runtime rt(strata::test::workers(2));
  constexpr int k_cells = 6;
  std::vector<strata::resource> res;
  for (int i = 0; i < k_cells; ++i) res.push_back(rt.make_resource());
  std::mt19937 rng(2024);
  const int graphs = static_cast<int>(strata::test::scaled(1000));
  strata::dataflow_graph g{rt};
  for (int gi = 0; gi < graphs; ++gi) {
    std::vector<op> ops(40);
    for (auto& o : ops) {
      const int nd = 1 + static_cast<int>(rng() % 3);
      std::vector<int> used;
      while (static_cast<int>(used.size()) < nd) {
        const int c = static_cast<int>(rng() % k_cells);
        if (std::find(used.begin(), used.end(), c) == used.end()) used.push_back(c);
      }
      for (int c : used) o.deps.emplace_back(c, static_cast<strata::dep_mode>(rng() % 4));
      o.k = static_cast<long>(rng() % 10);
    }
    std::vector<long> serial(k_cells, 1), parallel(k_cells, 1);
    for (const auto& o : ops) apply(o, serial);
    for (const auto& o : ops) {
      std::vector<strata::dependence> deps;
      for (auto [c, m] : o.deps) deps.push_back({res[static_cast<std::size_t>(c)], m});
      g.task(deps, [&parallel, &o] { apply(o, parallel); });
    }
    g.wait();
    ASSERT_EQ(parallel, serial) << "graph " << gi;
  }
}

// The caller may destroy a graph as soon as wait() returned: the task that
// finished last must not touch it afterwards (ASan saw a use after free in
// this loop before wait() waited for finishers to leave).
TEST(Dataflow, AGraphMayBeDestroyedRightAfterWait) {
  strata::runtime rt(strata::test::workers(2));
  auto r = rt.make_resource();
  const std::size_t n = strata::test::scaled(20000);
  std::size_t ran = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto g = std::make_unique<strata::dataflow_graph>(rt);
    g->task({strata::inout(r)}, [&ran] { ++ran; });
    g->wait();
    g.reset();
  }
  EXPECT_EQ(ran, n);
}

TEST(Dataflow, WaitRethrowsAndTheGraphGoesOn) {
  strata::runtime rt(strata::test::workers(2));
  auto a = rt.make_resource();
  strata::dataflow_graph g{rt};
  int x = 0;
  g.task({strata::out(a)}, [&] { x = 1; });
  g.task({strata::inout(a)}, [] { throw std::runtime_error("cell failed"); });
  g.task({strata::inout(a)}, [&] { x += 10; });
  EXPECT_THROW(g.wait(), std::runtime_error);
  EXPECT_EQ(x, 11) << "later tasks still ran, in order";
  g.task({strata::inout(a)}, [&] { x *= 2; });
  g.wait();
  EXPECT_EQ(x, 22);
}

TEST(Dataflow, WaitFromInsideATaskHelps) {
  strata::runtime rt(strata::test::workers(1));
  const long r = rt.submit([] {
                    strata::dataflow_graph g{*strata::this_runtime()};
                    auto a = strata::this_runtime()->make_resource();
                    long v = 0;
                    for (int i = 0; i < 100; ++i) g.task({strata::inout(a)}, [&v, i] { v = v * 3 % 1000003 + i; });
                    g.wait();
                    return v;
                  }).get();
  long v = 0;
  for (int i = 0; i < 100; ++i) v = v * 3 % 1000003 + i;
  EXPECT_EQ(r, v);
}

TEST(Dataflow, BadUseIsAClearError) {
  strata::runtime rt(strata::test::workers(1));
  strata::runtime other(strata::test::workers(1));
  auto a = rt.make_resource();
  auto foreign = other.make_resource();
  auto expect_usage = [](auto&& f, const std::string& text) {
    try {
      f();
      ADD_FAILURE() << "accepted: " << text;
    } catch (const strata::usage_error& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  strata::dataflow_graph g{rt};
  expect_usage([&] { g.task({strata::in(foreign)}, [] {}); }, "belongs to another runtime");
  expect_usage([&] { g.task({strata::in(a), strata::out(a)}, [] {}); }, "appears twice");
  int x = 0;
  g.task({strata::inout(a)}, [&x] { x = 5; });
  g.wait();
  EXPECT_EQ(x, 5) << "still works";
}

}  // namespace
