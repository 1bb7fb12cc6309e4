// Thread creation refused: for worker k of n, the runtime reports which
// worker could not start and why, joins the ones already started and leaves
// nothing behind; the actor monitor thread refused: the actors still run,
// unmigrated, and the runtime says so.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <strata/strata.hpp>

#include "fault_support.hpp"
#include "runtime_config.hpp"

namespace {

using strata::fault::site;

long fib(long n) {
  if (n < 2) return n;
  long a = 0;
  strata::task_group g;
  g.run([&] { a = fib(n - 1); });
  const long b = fib(n - 2);
  g.wait();
  return a + b;
}

// Every worker k of 4 in turn: the constructor throws a runtime_error that
// names k and the errno, and the threads started before k are gone.
TEST(FaultThreads, WorkerKCannotStartTheRuntimeSaysWhichAndReleasesTheOthers) {
  constexpr unsigned n = 4;
  const std::size_t threads_before = strata::test::threads_now();
  std::uint64_t injected = 0;
  for (unsigned k = 0; k < n; ++k) {
    strata::test::armed_fault f(site::thread_create, EAGAIN, k);
    try {
      strata::runtime rt{strata::test::workers(n)};
      ADD_FAILURE() << "the runtime started although worker " << k << " could not";
    } catch (const strata::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("worker thread " + std::to_string(k) + " of " + std::to_string(n)), std::string::npos)
          << what;
      EXPECT_NE(what.find(std::strerror(EAGAIN)), std::string::npos) << what;
    }
    EXPECT_EQ(f.injected(), 1u) << "worker " << k;
    injected += f.injected();
    EXPECT_EQ(strata::test::threads_now(), threads_before) << "threads left behind when worker " << k << " failed";
  }
  EXPECT_EQ(injected, n);
  // The process is not damaged: a runtime made next works.
  strata::runtime rt{strata::test::workers(n)};
  EXPECT_EQ(rt.submit([] { return fib(20); }).get(), 6765);
}

// A refused thread after a failed start does not wedge the next start: the
// constructor may be retried until the system has threads again.
TEST(FaultThreads, RetryAfterARefusedStartSucceeds) {
  const std::size_t threads_before = strata::test::threads_now();
  {
    strata::test::armed_fault f(site::thread_create, EAGAIN, 1, 3);  // worker 1 of three starts in a row
    for (int attempt = 0; attempt < 3; ++attempt) {
      EXPECT_THROW(strata::runtime{strata::test::workers(2)}, strata::runtime_error) << "attempt " << attempt;
    }
    EXPECT_EQ(f.injected(), 3u);
  }
  EXPECT_EQ(strata::test::threads_now(), threads_before);
  strata::runtime rt{strata::test::workers(2)};
  EXPECT_EQ(rt.submit([] { return fib(18); }).get(), 2584);
}

struct add {
  long by;
};
struct get {};
struct counter : strata::actor<counter> {
  long n = 0;
  void receive(strata::actor_context&, const add& m) { n += m.by; }
  long receive(strata::actor_context&, const get&) { return n; }
};

// The monitor (a thread of the actors module) cannot start: a warning, and
// every message still arrives once, in order per sender.
TEST(FaultThreads, TheActorMonitorCannotStartActorsRunUnmigrated) {
  strata::config c = strata::test::workers(2);
  c.policy = strata::policy::tiered_stealing;  // the only policy with a monitor besides hybrid
  c.monitor_period_ms = 1;
  strata::runtime rt{c};
  const std::size_t threads_with_workers = strata::test::threads_now();
  strata::test::armed_fault f(site::thread_create, EAGAIN);
  testing::internal::CaptureStderr();
  auto a = rt.spawn_actor<counter>();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(f.injected(), 1u);
  EXPECT_NE(err.find("could not start the actor monitor thread"), std::string::npos) << err;
  EXPECT_NE(err.find("actors will not migrate"), std::string::npos) << err;
  EXPECT_EQ(strata::test::threads_now(), threads_with_workers) << "no monitor thread exists";
  long expected = 0;
  for (int i = 1; i <= 10000; ++i) {
    a.send(add{i});
    expected += i;
  }
  EXPECT_EQ(a.ask(get{}).get(), expected);
}

}  // namespace
