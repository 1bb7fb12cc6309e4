// The engine seam: engine::external runtimes whose workers are hosted by
// user threads (run_worker) or run inline by the caller (tick, try_tick,
// and waits outside the workers).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using namespace std::chrono_literals;

strata::config external(unsigned workers) {
  strata::config c = strata::test::workers(workers);
  c.engine = strata::engine::external;
  return c;
}

template <class F>
void expect_usage_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no usage_error (expected one mentioning '" << needle << "')";
  } catch (const strata::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Handshake: until a thread hosts worker w, a wait on the caller runs the
// workers inline; the worker is hosted once a task on it runs on `host`.
void wait_hosted(strata::runtime& rt, unsigned w, std::thread::id host) {
  while (rt.submit_on(strata::worker_id{w}, [] { return std::this_thread::get_id(); }).get() != host) {
    std::this_thread::yield();
  }
}

long fib(long n) {
  if (n < 2) return n;
  long a = 0;
  strata::task_group g;
  g.run([&a, n] { a = fib(n - 1); });
  const long b = fib(n - 2);
  g.wait();
  return a + b;
}

TEST(Engine, UserThreadsHostTheWorkers) {
  strata::runtime rt(external(2));
  std::vector<std::thread> hosts;
  std::vector<std::thread::id> ids;
  for (unsigned i = 0; i < 2; ++i) {
    hosts.emplace_back([&rt, i] { rt.run_worker(strata::worker_id{i}); });
    ids.push_back(hosts.back().get_id());
  }
  for (unsigned i = 0; i < 2; ++i) wait_hosted(rt, i, ids[i]);
  // Every task runs on one of the hosting threads.
  const int n = static_cast<int>(strata::test::scaled(10'000));
  std::vector<strata::future<std::thread::id>> where;
  for (int i = 0; i < n; ++i) where.push_back(rt.submit([] { return std::this_thread::get_id(); }));
  std::set<std::thread::id> seen;
  for (auto& f : where) seen.insert(f.get());
  for (const auto& id : seen) EXPECT_TRUE(id == ids[0] || id == ids[1]);
  EXPECT_EQ(rt.submit([] { return fib(20); }).get(), 6765);
  // Each worker runs on its own host.
  for (unsigned i = 0; i < 2; ++i) {
    EXPECT_EQ(rt.submit_on(strata::worker_id{i}, [] { return std::this_thread::get_id(); }).get(), ids[i]);
  }
  rt.wait_idle();
  rt.shutdown();  // every run_worker returns
  for (auto& t : hosts) t.join();
  EXPECT_GE(rt.stats().total_executed(), static_cast<std::uint64_t>(n));
}

TEST(Engine, AWorkerHostedTwiceIsAnErrorAndRunWorkerAfterShutdownReturns) {
  strata::runtime rt(external(1));
  std::thread host([&rt] { rt.run_worker(strata::worker_id{0}); });
  wait_hosted(rt, 0, host.get_id());
  expect_usage_error([&] { rt.run_worker(strata::worker_id{0}); }, "already hosted");
  expect_usage_error([&] { rt.run_worker(strata::worker_id{1}); }, "worker 1 does not exist");
  expect_usage_error([&] { rt.tick(); }, "hosted by run_worker");
  expect_usage_error([&] { rt.submit([&rt] { rt.run_worker(strata::worker_id{0}); }).get(); }, "inside a task");
  rt.shutdown();
  host.join();
  rt.run_worker(strata::worker_id{0});  // nothing to host any more: returns at once
}

TEST(Engine, WaitIdleNamesAWorkerThatNobodyHosts) {
  strata::runtime rt(external(2));
  std::thread host0([&rt] { rt.run_worker(strata::worker_id{0}); });
  wait_hosted(rt, 0, host0.get_id());
  std::atomic<bool> ran{false};
  auto stuck = rt.submit_on(strata::worker_id{1}, [&ran] { ran.store(true); });
  expect_usage_error([&] { rt.wait_idle(); }, "worker 1 is not hosted");
  EXPECT_FALSE(ran.load());
  std::thread host1([&rt] { rt.run_worker(strata::worker_id{1}); });
  stuck.get();
  rt.wait_idle();
  rt.shutdown();
  host0.join();
  host1.join();
  EXPECT_TRUE(ran.load());
}

TEST(Engine, DestroyingARuntimeWithAnUnhostedWorkerSaysWhyAndStops) {
  std::atomic<bool> ran{false};
  std::thread host0;
  testing::internal::CaptureStderr();
  {
    strata::runtime rt(external(2));
    host0 = std::thread([&rt] { rt.run_worker(strata::worker_id{0}); });
    wait_hosted(rt, 0, host0.get_id());
    (void)rt.submit_on(strata::worker_id{1}, [&ran] { ran.store(true); });
  }  // ~runtime: wait_idle fails after its grace; the destructor stops anyway
  const std::string err = testing::internal::GetCapturedStderr();
  host0.join();  // run_worker returned: the runtime stopped its hosts
  EXPECT_FALSE(ran.load());
  EXPECT_NE(err.find("worker 1 is not hosted"), std::string::npos) << err;
  EXPECT_NE(err.find("stopping without waiting"), std::string::npos) << err;
  EXPECT_NE(err.find("1 task(s) never ran"), std::string::npos) << err;
}

TEST(Engine, AnOwnedRuntimeRefusesTheEngineCalls) {
  strata::runtime rt(strata::test::workers(1));
  expect_usage_error([&] { rt.run_worker(strata::worker_id{0}); }, "engine::external");
  expect_usage_error([&] { rt.tick(); }, "engine::external");
  expect_usage_error([&] { rt.try_tick(); }, "engine::external");
}

TEST(Engine, TickRunsEveryWorkerOnTheCaller) {
  strata::runtime rt(external(3));
  const auto me = std::this_thread::get_id();
  std::atomic<int> on_me{0};
  for (unsigned w = 0; w < 3; ++w) {
    rt.submit_on(strata::worker_id{w}, [&on_me, me] {
      if (std::this_thread::get_id() == me) on_me.fetch_add(1);
    });
  }
  EXPECT_EQ(on_me.load(), 0) << "nothing runs before a tick";
  const std::size_t ran = rt.tick();
  EXPECT_EQ(ran, 3u);
  EXPECT_EQ(on_me.load(), 3);
  EXPECT_EQ(rt.tick(), 0u);
  EXPECT_FALSE(rt.try_tick()) << "nothing left to run";
  rt.spawn([] {});
  EXPECT_TRUE(rt.try_tick());
  expect_usage_error([&] { rt.submit([&rt] { rt.tick(); }).get(); }, "inside a task");
}

// A program of tasks (nested groups, submits to other workers, futures
// waited inside tasks) under tick(): the same trace on every run.
std::vector<int> traced_program() {
  strata::runtime rt(external(3));
  std::vector<int> trace;  // one thread runs everything: no synchronisation needed
  auto note = [&trace](int id) { trace.push_back(id * 10 + static_cast<int>(strata::this_worker()->value)); };
  for (int i = 0; i < 30; ++i) {
    rt.spawn([&, i] {
      note(i);
      strata::task_group g;
      for (int k = 0; k < 3; ++k) g.run([&, i, k] { note(100 + i * 3 + k); });
      g.wait();
      if (i % 5 == 0) {
        const int v = rt.submit_on(strata::worker_id{static_cast<unsigned>(i) % 3}, [&, i] {
                          note(1000 + i);
                          return i;
                        }).get();
        note(2000 + v);
      }
    });
  }
  while (rt.tick() != 0) {
  }
  rt.wait_idle();
  return trace;
}

TEST(Engine, TickGivesTheSameTraceEveryRun) {
  const auto first = traced_program();
  EXPECT_EQ(first.size(), 30u + 90u + 12u);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(traced_program(), first) << "run " << run;
}

TEST(Engine, WaitsOutsideTheWorkersRunThemInline) {
  strata::runtime rt(external(2));
  EXPECT_EQ(rt.submit([] { return fib(15); }).get(), 610);  // future::get ticks
  strata::task_group g{rt};
  std::atomic<int> n{0};
  for (int i = 0; i < 100; ++i) g.run([&n] { n.fetch_add(1); });
  g.wait();  // task_group::wait ticks
  EXPECT_EQ(n.load(), 100);
  std::vector<int> v(10'000, 0);
  strata::parallel_for(rt, 0, v.size(), [&v](std::size_t i) { v[i] = 1; });
  long sum = 0;
  for (int x : v) sum += x;
  EXPECT_EQ(sum, 10'000);
  for (int i = 0; i < 50; ++i) rt.spawn([&n] { n.fetch_add(1); });
  rt.wait_idle();  // wait_idle ticks
  EXPECT_EQ(n.load(), 150);
}

TEST(Engine, ADestroyedInlineRuntimeRunsWhatIsLeft) {
  std::atomic<int> n{0};
  {
    strata::runtime rt(external(2));
    for (int i = 0; i < 100; ++i) rt.spawn([&n] { n.fetch_add(1); });
  }
  EXPECT_EQ(n.load(), 100);
}

}  // namespace
