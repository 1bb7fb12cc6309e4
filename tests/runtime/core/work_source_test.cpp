// Work sources and subsystems, the core's seams, used by a source of the
// test's own: polled between tasks, counted by wait_idle and stats(),
// consulted before a worker parks (no lost wake-up), handed routed frames,
// and supplying the idle wait.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/spawn.hpp>
#include <strata/runtime/runtime.hpp>

#include "eventually.hpp"
#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using namespace std::chrono_literals;
using strata::detail::runtime_core;
using strata::detail::task;
using strata::detail::worker;
using strata::test::eventually;

// Items posted by threads outside the workers for worker 0: a count of
// posted and one of processed (the source is the only consumer).
struct item_source final : strata::detail::work_source {
  std::atomic<std::uint64_t> posted{0};     // RMW by producers (release: the item is published)
  std::atomic<std::uint64_t> processed{0};  // written by the worker (release: progress for the test)
  std::atomic<std::uint64_t> ready_calls{0};
  std::atomic<bool> gate{true};  // while false, the source holds its items back
  std::atomic<std::uint64_t> routed{0};

  bool ready(worker&) noexcept override {
    ready_calls.fetch_add(1, std::memory_order_relaxed);  // relaxed: a progress hint for the test
    // acquire: pairs with the producers' release increment.
    return gate.load(std::memory_order_acquire) &&
           posted.load(std::memory_order_acquire) > processed.load(std::memory_order_relaxed);
  }
  std::size_t poll(worker&, std::size_t budget) noexcept override {
    if (!gate.load(std::memory_order_acquire)) return 0;  // acquire: pairs with the test's release
    std::size_t ran = 0;
    const std::uint64_t p = posted.load(std::memory_order_acquire);  // acquire: as in ready
    std::uint64_t done = processed.load(std::memory_order_relaxed);   // relaxed: we are its only writer
    while (ran < budget && done < p) {
      ++done;
      ++ran;
    }
    processed.store(done, std::memory_order_release);  // release: the test and finished() read it
    return ran;
  }
  void accept(worker& w, task* t) noexcept override {
    routed.fetch_add(1, std::memory_order_release);  // release: the test reads it after wait_idle
    if (t->destroy != nullptr) t->destroy(t);
    delete t;                  // a heap frame (made outside the workers)
    w.counters.executed.add();  // the frame was counted spawned: it is done
  }
};

// The subsystem that owns it: quiescence (posted vs processed) and a counter.
struct item_system final : strata::detail::subsystem {
  static constexpr char key = 0;
  explicit item_system(runtime_core& rt) {
    index = rt.add_source([this](worker& w) -> strata::detail::work_source* {
      auto* s = new item_source;
      if (w.index == 0) source = s;
      return s;
    });
  }
  std::uint64_t finished() const noexcept override { return source->processed.load(std::memory_order_acquire); }
  std::uint64_t created() const noexcept override { return source->posted.load(std::memory_order_acquire); }
  void add_stats(strata::runtime_stats& s) const override {
    s.workers[0].set_counter("test_items", source->processed.load(std::memory_order_acquire));
  }
  item_source* source = nullptr;
  unsigned index = 0;
};

item_system& attach(strata::runtime& rt) { return strata::detail::subsystem_of<item_system>(rt.core()); }

void post(strata::runtime& rt, item_source& s) {
  s.posted.fetch_add(1, std::memory_order_release);  // release: publishes the item to ready/poll
  strata::detail::notify_worker(*rt.core().workers[0]);
}

TEST(WorkSource, PolledCountedAndConsultedBeforeParkingWithNoLostWakeUp) {
  strata::runtime rt(strata::test::workers(1));
  item_system& sys = attach(rt);
  item_source& src = *sys.source;
  const worker& w0 = *rt.core().workers[0];
  const std::uint64_t rounds = strata::test::scaled(100'000);
  std::mt19937 rng(7);
  std::uint64_t posted_while_asleep = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    // Post in every phase of the worker's idle search: at once (it is still
    // polling), after it asked the source k more times (spinning, or in its
    // parking re-check), or once it announced that it parks (then it is in
    // its re-check or asleep on its futex).
    const auto mode = static_cast<unsigned>(rng() % 3);
    const std::uint64_t calls = src.ready_calls.load(std::memory_order_relaxed);
    const std::uint64_t parks = w0.counters.parks.get();
    auto parking = [&w0] { return w0.sleeping.load(std::memory_order_acquire) == 1; };
    if (mode == 1) {
      const std::uint64_t k = 1 + rng() % 300;
      ASSERT_TRUE(eventually([&] { return src.ready_calls.load(std::memory_order_relaxed) >= calls + k || parking(); }))
          << "round " << r << ": the worker stopped asking its source without parking";
    } else if (mode == 2) {
      ASSERT_TRUE(eventually(parking)) << "round " << r << ": never parked";
      // Mostly asleep on the futex by now: its park is counted, or a moment passed.
      const auto since = std::chrono::steady_clock::now();
      while (w0.counters.parks.get() == parks && std::chrono::steady_clock::now() - since < 200us) {
      }
      ++posted_while_asleep;
    }
    post(rt, src);
    ASSERT_TRUE(eventually([&] { return src.processed.load(std::memory_order_acquire) == r + 1; }))
        << "round " << r << " (mode " << mode << "): the item was never polled: a lost wake-up";
  }
  rt.wait_idle();
  EXPECT_EQ(src.processed.load(), rounds);
  const auto stats = rt.stats();
  EXPECT_EQ(stats.workers[0].counter("test_items"), rounds);
  EXPECT_NE(stats.to_json().find("\"test_items\""), std::string::npos);
  EXPECT_GT(posted_while_asleep, 0u);
  EXPECT_GT(stats.workers[0].parks, 0u);
}

TEST(WorkSource, WaitIdleWaitsForTheSourcesWork) {
  strata::runtime rt(strata::test::workers(2));
  item_system& sys = attach(rt);
  item_source& src = *sys.source;
  src.gate.store(false, std::memory_order_release);  // release: before the items exist
  for (int i = 0; i < 10; ++i) post(rt, src);
  std::atomic<bool> idle{false};
  std::thread waiter([&] {
    rt.wait_idle();
    idle.store(true, std::memory_order_release);  // release: the test reads it
  });
  // The source holds its items back: wait_idle cannot return. Handshake: the
  // worker has consulted the source (and found nothing ready) many times.
  const std::uint64_t calls = src.ready_calls.load();
  ASSERT_TRUE(eventually([&] { return src.ready_calls.load() > calls + 100 || rt.core().workers[0]->counters.parks.get() > 0; }));
  EXPECT_FALSE(idle.load(std::memory_order_acquire)) << "wait_idle returned with 10 items in flight";
  src.gate.store(true, std::memory_order_release);  // release: pairs with poll's acquire
  strata::detail::notify_worker(*rt.core().workers[0]);
  waiter.join();
  EXPECT_TRUE(idle.load());
  EXPECT_EQ(src.processed.load(), 10u);
}

TEST(WorkSource, RoutedFramesGoToTheirSourceNotRun) {
  strata::runtime rt(strata::test::workers(2));
  item_system& sys = attach(rt);
  std::atomic<int> ran{0};
  const int frames = 1000;
  for (int i = 0; i < frames; ++i) {
    task* t = new task{};
    t->home = strata::detail::k_no_home;
    t->group = nullptr;
    t->how = strata::detail::completion::routed;
    t->sink = static_cast<std::uint8_t>(sys.index);
    strata::detail::emplace_callable(t, [&ran] { ran.fetch_add(1); });
    strata::detail::submit_to_worker(rt.core(), 0, t);
  }
  rt.wait_idle();
  EXPECT_EQ(sys.source->routed.load(std::memory_order_acquire), static_cast<std::uint64_t>(frames));
  EXPECT_EQ(ran.load(), 0) << "a routed frame is accepted by its source, never run as a task";
}

// A source that supplies the idle wait: the worker sleeps in poll(2) on a
// pipe (the source's own events) and an eventfd (wake-ups).
struct pipe_source final : strata::detail::work_source {
  int pipe_fd[2] = {-1, -1};
  int event_fd = -1;
  std::atomic<std::uint64_t> bytes{0};  // read so far (release: the test reads it)
  std::atomic<std::uint64_t> waits{0};
  std::atomic<bool> asleep{false};  // inside poll(2) (release/acquire: the test waits for it)
  pipe_source() {
    if (::pipe(pipe_fd) != 0) throw std::runtime_error("pipe");
    event_fd = ::eventfd(0, EFD_NONBLOCK);
    if (event_fd < 0) throw std::runtime_error("eventfd");
    ::fcntl(pipe_fd[0], F_SETFL, O_NONBLOCK);
  }
  ~pipe_source() override {
    ::close(pipe_fd[0]);
    ::close(pipe_fd[1]);
    ::close(event_fd);
  }
  bool ready(worker&) noexcept override {
    pollfd p{pipe_fd[0], POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  }
  std::size_t poll(worker&, std::size_t budget) noexcept override {
    char buf[64];
    const auto n = ::read(pipe_fd[0], buf, budget < sizeof buf ? budget : sizeof buf);
    if (n <= 0) return 0;
    bytes.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_release);
    return static_cast<std::size_t>(n);
  }
  bool supplies_idle_wait() const noexcept override { return true; }
  void idle_wait(worker&) noexcept override {
    waits.fetch_add(1, std::memory_order_relaxed);  // relaxed: a statistic
    pollfd p[2] = {{pipe_fd[0], POLLIN, 0}, {event_fd, POLLIN, 0}};
    asleep.store(true, std::memory_order_release);
    ::poll(p, 2, -1);
    asleep.store(false, std::memory_order_release);
    std::uint64_t drained;
    if ((p[1].revents & POLLIN) != 0) (void)::read(event_fd, &drained, sizeof drained);
  }
  void wake_idle() noexcept override {
    const std::uint64_t one = 1;
    (void)::write(event_fd, &one, sizeof one);
  }
};

struct pipe_system final : strata::detail::subsystem {
  static constexpr char key = 0;
  explicit pipe_system(runtime_core& rt) {
    rt.add_source([this](worker&) -> strata::detail::work_source* { return source = new pipe_source; });
  }
  // Bytes the test wrote (it counts them before writing) against bytes read.
  std::uint64_t finished() const noexcept override { return source->bytes.load(std::memory_order_acquire); }
  std::uint64_t created() const noexcept override { return written.load(std::memory_order_acquire); }
  pipe_source* source = nullptr;
  std::atomic<std::uint64_t> written{0};
};

TEST(WorkSource, ASourceSuppliesTheIdleWaitAndItsOwnEventsWakeTheWorker) {
  strata::runtime rt(strata::test::workers(1));
  auto& sys = strata::detail::subsystem_of<pipe_system>(rt.core());
  pipe_source& src = *sys.source;
  // The worker may be asleep on its futex from before the source existed: a
  // task wakes it, and its next sleep is in the source's idle wait.
  rt.submit([] {}).get();
  const std::uint64_t rounds = strata::test::scaled(2000);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    if (r % 2 == 1) {  // every other byte finds the worker asleep in poll(2)
      ASSERT_TRUE(eventually([&] { return src.asleep.load(std::memory_order_acquire); })) << "round " << r;
    }
    sys.written.fetch_add(1, std::memory_order_release);  // release: counted before it exists
    const char byte = 'x';
    ASSERT_EQ(::write(src.pipe_fd[1], &byte, 1), 1);  // no notify: the pipe itself wakes the worker
    ASSERT_TRUE(eventually([&] { return src.bytes.load(std::memory_order_acquire) == r + 1; }))
        << "round " << r << ": the pipe did not wake the worker sleeping in the source's idle wait";
  }
  EXPECT_GE(src.waits.load(), rounds / 2);
  // A task from outside wakes it through wake_idle (the eventfd).
  for (int i = 0; i < 100; ++i) EXPECT_EQ(rt.submit([i] { return i; }).get(), i);
  rt.wait_idle();
  EXPECT_EQ(src.bytes.load(), rounds);
}

struct second_waiter final : strata::detail::subsystem {
  static constexpr char key = 0;
  explicit second_waiter(runtime_core& core) {
    core.add_source([](worker&) -> strata::detail::work_source* { return new pipe_source; });
  }
};

TEST(WorkSource, ASecondSourceSupplyingTheIdleWaitIsAnError) {
  strata::runtime rt(strata::test::workers(1));
  strata::detail::subsystem_of<pipe_system>(rt.core());
  using other = second_waiter;
  try {
    strata::detail::subsystem_of<other>(rt.core());
    FAIL() << "two sources supplying one worker's idle wait";
  } catch (const strata::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("idle wait"), std::string::npos) << e.what();
  }
}

}  // namespace
