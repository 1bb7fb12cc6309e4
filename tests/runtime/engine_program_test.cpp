// A whole program of tasks, actors and lock-mode tasks on one thread under
// tick(), in the same order on every run (the engine seam with the actors
// and access modules on top of it).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

#include "runtime_config.hpp"

namespace {

struct event {
  int what;
  unsigned worker;
  friend bool operator==(const event&, const event&) = default;
};

struct ping {
  int n;
};

struct echo : strata::actor<echo> {
  std::vector<event>* trace;
  strata::actor_ref<echo> peer;
  explicit echo(std::vector<event>* t) : trace(t) {}
  void receive(strata::actor_context&, const strata::actor_ref<echo>& p) { peer = p; }
  void receive(strata::actor_context& ctx, const ping& p) {
    trace->push_back({10'000 + p.n, ctx.worker().value});
    if (p.n > 0) peer.send(ping{p.n - 1});
  }
  int receive(strata::actor_context& ctx, const int& x) {
    trace->push_back({20'000 + x, ctx.worker().value});
    return 2 * x;
  }
};

std::vector<event> run_program() {
  strata::config c = strata::test::workers(3);
  c.engine = strata::engine::external;
  strata::runtime rt(c);
  std::vector<event> trace;  // one thread runs it all: no synchronisation
  const auto me = std::this_thread::get_id();
  auto note = [&trace, me](int what) {
    EXPECT_EQ(std::this_thread::get_id(), me);
    trace.push_back({what, strata::this_worker()->value});
  };
  auto a = rt.spawn_actor<echo>(strata::affinity::sticky, strata::worker_id{0}, &trace);
  auto b = rt.spawn_actor<echo>(strata::affinity::sticky, strata::worker_id{2}, &trace);
  a.send(b);
  b.send(a);
  strata::resource acct[3] = {rt.make_resource(), rt.make_resource(), rt.make_resource()};
  long balance[3] = {100, 100, 100};
  for (int i = 0; i < 40; ++i) {
    const int from = i % 3, to = (i + 1) % 3;
    rt.spawn_with_access({strata::write(acct[from]), strata::write(acct[to])}, [&, i, from, to] {
      note(i);
      balance[from] -= 1;
      balance[to] += 1;
    });
    if (i % 10 == 0) {
      rt.spawn([&, i] {
        note(1000 + i);
        const int twice = a.ask(i).get();  // waits inside a task: the pass runs the others
        note(2000 + twice);
      });
    }
  }
  a.send(ping{20});
  strata::dataflow_graph g{rt};
  int x = 0;
  g.task({strata::out(acct[0])}, [&] { x = 1; note(3000); });
  g.task({strata::inout(acct[0])}, [&] { x *= 5; note(3001); });
  while (rt.tick() != 0) {
  }
  g.wait();
  rt.wait_idle();
  EXPECT_EQ(balance[0] + balance[1] + balance[2], 300);
  EXPECT_EQ(x, 5);
  EXPECT_TRUE(rt.stats().workers[0].has_counter("messages_local"));
  return trace;
}

TEST(EngineProgram, TasksActorsAndLockModeUnderTickGiveTheSameTraceEveryRun) {
  const auto first = run_program();
  // 40 transfers, 4 askers (start, ask, answer), 21 pings, 2 dataflow tasks.
  EXPECT_EQ(first.size(), 40u + 4u * 3u + 21u + 2u);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(run_program(), first) << "run " << run;
}

}  // namespace
