// Actors: delivery regimes, guarantees (one message at a time, FIFO per
// sender, no loss), fairness both ways, failure isolation and supervision,
// dead letters, affinity, deterministic traces, telemetry, bad use.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

#include "json_reader.hpp"
#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using namespace std::chrono_literals;

struct add {
  long by;
};
struct get {};
struct boom {};

struct counter : strata::actor<counter> {
  long n = 0;
  void receive(strata::actor_context&, const add& m) { n += m.by; }
  long receive(strata::actor_context&, const get&) { return n; }
  void receive(strata::actor_context&, const boom&) { throw std::runtime_error("boom"); }
};

std::uint64_t sum_stat(const strata::runtime& rt, const char* counter) {
  std::uint64_t n = 0;
  for (const auto& w : rt.stats().workers) n += w.counter(counter);
  return n;
}

TEST(Actor, SendAndAskFromOutside) {
  strata::runtime rt(strata::test::workers(2));
  auto c = rt.spawn_actor<counter>();
  const long n = static_cast<long>(strata::test::scaled(100000));
  for (long i = 0; i < n; ++i) c.send(add{1});
  EXPECT_EQ(c.ask(get{}).get(), n);
  EXPECT_TRUE(c.address().valid());
  EXPECT_EQ(c.address().rank(), 0u);
}

TEST(Actor, RoundRobinAndExplicitPlacement) {
  strata::runtime rt(strata::test::workers(3));
  std::vector<unsigned> where;
  struct where_am_i {};
  struct locator : strata::actor<locator> {
    unsigned receive(strata::actor_context& ctx, const where_am_i&) {
      EXPECT_EQ(ctx.worker(), strata::this_worker().value());
      return ctx.worker().value;
    }
  };
  for (int i = 0; i < 6; ++i) where.push_back(rt.spawn_actor<locator>().ask(where_am_i{}).get());
  for (unsigned w = 0; w < 3; ++w) EXPECT_EQ(std::count(where.begin(), where.end(), w), 2) << "worker " << w;
  auto s = rt.spawn_actor<locator>(strata::affinity::sticky, strata::worker_id{2});
  EXPECT_EQ(s.ask(where_am_i{}).get(), 2u);
  EXPECT_EQ(s.address().worker(), 2u);
  EXPECT_THROW(rt.spawn_actor<locator>(strata::affinity::sticky, strata::worker_id{3}), strata::usage_error);
}

// Ping-pong between two actors: on one worker every message stays local
// (no inbox); on two workers every message crosses through an inbox.
struct ball {
  int left;
};
struct player : strata::actor<player> {
  strata::actor_ref<player> other;
  std::atomic<int>* done;
  explicit player(std::atomic<int>* d) : done(d) {}
  void receive(strata::actor_context&, const strata::actor_ref<player>& o) { other = o; }
  void receive(strata::actor_context&, const ball& b) {
    if (b.left == 0) {
      done->store(1, std::memory_order_release);  // release: the test thread polls it
      return;
    }
    other.send(ball{b.left - 1});
  }
};

void ping_pong(strata::runtime& rt, unsigned worker_a, unsigned worker_b, int rounds) {
  std::atomic<int> done{0};
  auto a = rt.spawn_actor<player>(strata::affinity::sticky, strata::worker_id{worker_a}, &done);
  auto b = rt.spawn_actor<player>(strata::affinity::sticky, strata::worker_id{worker_b}, &done);
  a.send(b);
  b.send(a);
  rt.wait_idle();
  a.send(ball{2 * rounds});
  rt.wait_idle();
  EXPECT_EQ(done.load(std::memory_order_acquire), 1);  // acquire: pairs with the release store
}

TEST(Actor, SameWorkerMessagesStayLocal) {
  strata::runtime rt(strata::test::workers(2));
  const auto local_before = sum_stat(rt, "messages_local");
  const auto remote_before = sum_stat(rt, "messages_remote");
  ping_pong(rt, 1, 1, 10000);
  EXPECT_GE(sum_stat(rt, "messages_local") - local_before, 20000u);
  // Only the test thread's sends (2 refs + the first ball) crossed an inbox.
  EXPECT_EQ(sum_stat(rt, "messages_remote") - remote_before, 3u);
}

TEST(Actor, CrossWorkerMessagesGoThroughTheInbox) {
  strata::runtime rt(strata::test::workers(2));
  ping_pong(rt, 0, 1, 10000);
  EXPECT_GE(sum_stat(rt, "messages_remote"), 20000u);
  EXPECT_EQ(sum_stat(rt, "messages_local"), 0u);
}

TEST(Actor, ChildrenSpawnedFromAnActorStayOnItsWorker) {
  strata::runtime rt(strata::test::workers(3));
  struct make_children {};
  struct parent : strata::actor<parent> {
    std::vector<unsigned> receive(strata::actor_context& ctx, const make_children&) {
      std::vector<unsigned> w;
      for (int i = 0; i < 5; ++i) {
        auto c = ctx.spawn_actor<counter>();
        c.send(add{i});
        w.push_back(c.address().worker());
      }
      return w;
    }
  };
  auto p = rt.spawn_actor<parent>(strata::affinity::sticky, strata::worker_id{1});
  for (unsigned w : p.ask(make_children{}).get()) EXPECT_EQ(w, 1u);
}

// One message at a time, FIFO per sender, every message exactly once:
// external threads and tasks on every worker send (sender, seq) pairs.
struct stamp {
  unsigned sender;
  std::uint64_t seq;
};
struct checker : strata::actor<checker> {
  std::vector<std::uint64_t> next;
  std::atomic<int> inside{0};
  std::uint64_t overlaps = 0, out_of_order = 0, received = 0;
  explicit checker(unsigned senders) : next(senders, 0) {}
  void receive(strata::actor_context&, const stamp& s) {
    if (inside.fetch_add(1, std::memory_order_relaxed) != 0) ++overlaps;  // relaxed: a detector
    if (s.seq != next[s.sender]) ++out_of_order;
    next[s.sender] = s.seq + 1;
    ++received;
    inside.fetch_sub(1, std::memory_order_relaxed);
  }
  std::vector<std::uint64_t> receive(strata::actor_context&, const get&) {
    return {overlaps, out_of_order, received};
  }
};

TEST(Actor, OneAtATimeFifoPerSenderExactlyOnce) {
  strata::runtime rt(strata::test::workers(2));
  constexpr unsigned k_threads = 3, k_tasks = 4;
  const std::uint64_t per = strata::test::scaled(20000);
  auto c = rt.spawn_actor<checker>(k_threads + k_tasks);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < per; ++i) c.send(stamp{t, i});
    });
  }
  std::vector<strata::future<void>> tasks;
  for (unsigned t = 0; t < k_tasks; ++t) {
    tasks.push_back(rt.submit_on(strata::worker_id{t % 2}, [&, t] {
      for (std::uint64_t i = 0; i < per; ++i) c.send(stamp{k_threads + t, i});
    }));
  }
  for (auto& th : threads) th.join();
  for (auto& f : tasks) f.get();
  const auto r = c.ask(get{}).get();
  EXPECT_EQ(r[0], 0u) << "two messages were handled at once";
  EXPECT_EQ(r[1], 0u) << "messages of one sender arrived out of order";
  EXPECT_EQ(r[2], (k_threads + k_tasks) * per);
}

// Fairness, one way: a flood of messages to one actor does not hold back
// another actor or a task on the same worker.
struct slow_sink : strata::actor<slow_sink> {
  std::atomic<std::uint64_t>* handled;
  explicit slow_sink(std::atomic<std::uint64_t>* h) : handled(h) {}
  void receive(strata::actor_context&, const add&) {
    const auto until = std::chrono::steady_clock::now() + 2us;
    while (std::chrono::steady_clock::now() < until) {
    }
    handled->fetch_add(1, std::memory_order_relaxed);  // relaxed: progress counter
  }
};

TEST(Actor, FloodOfMessagesDoesNotStarveOthersOrTasks) {
  strata::config c = strata::test::workers(1);
  c.actor_budget = 16;
  strata::runtime rt(c);
  std::atomic<std::uint64_t> handled{0};
  auto sink = rt.spawn_actor<slow_sink>(&handled);
  auto other = rt.spawn_actor<counter>();
  const std::uint64_t flood = 20000;  // about 40 ms of work
  rt.submit([&] {
      for (std::uint64_t i = 0; i < flood; ++i) sink.send(add{1});
    }).get();
  const std::uint64_t at_task = rt.submit([&] { return handled.load(std::memory_order_relaxed); }).get();
  const long at_other = other.ask(get{}).get();
  const std::uint64_t at_ask = handled.load(std::memory_order_relaxed);
  EXPECT_EQ(at_other, 0);
  EXPECT_LT(at_task, flood) << "the task waited for the whole flood";
  EXPECT_LT(at_ask, flood) << "the other actor waited for the whole flood";
  rt.wait_idle();
  EXPECT_EQ(handled.load(), flood);
  EXPECT_GE(rt.stats().workers[0].counter("mailbox_high_water"), flood / 2);
}

// Fairness, the other way: a worker busy with a long fork-join computation
// still gives actors their turns.
TEST(Actor, BusyDequeDoesNotStarveActors) {
  strata::runtime rt(strata::test::workers(1));
  auto c = rt.spawn_actor<counter>();
  std::atomic<bool> sent{false};
  const long n = static_cast<long>(strata::test::scaled(100000));
  std::atomic<long> tasks_left{n};
  auto f = rt.submit([&] {
    strata::task_group g;
    for (long i = 0; i < n; ++i) {
      g.run([&] {
        const auto until = std::chrono::steady_clock::now() + 2us;
        while (std::chrono::steady_clock::now() < until) {
        }
        tasks_left.fetch_sub(1, std::memory_order_relaxed);  // relaxed: progress counter
      });
      if (i == 10) {
        c.send(add{7});
        sent.store(true);
      }
    }
    g.wait();
  });
  while (!sent.load()) std::this_thread::yield();
  EXPECT_EQ(c.ask(get{}).get(), 7);
  EXPECT_GT(tasks_left.load(), 0) << "the actor answered only after the whole fork-join";
  f.get();
}

TEST(Actor, ExceptionPoisonsOnlyThatActorAndLaterMessagesAreDeadLetters) {
  strata::runtime rt(strata::test::workers(2));
  rt.set_supervisor([](const strata::actor_failure& f) {
    EXPECT_EQ(f.what, "boom");
    return strata::supervision::stop;
  });
  auto bad = rt.spawn_actor<counter>(strata::affinity::sticky, strata::worker_id{0});
  auto good = rt.spawn_actor<counter>(strata::affinity::sticky, strata::worker_id{0});
  bad.send(add{1});
  EXPECT_THROW(bad.ask(boom{}).get(), std::runtime_error);  // the ask gets the exception
  for (int i = 0; i < 10; ++i) bad.send(add{1});
  EXPECT_THROW(bad.ask(get{}).get(), strata::dead_letter_error);
  good.send(add{5});
  EXPECT_EQ(good.ask(get{}).get(), 5);
  rt.wait_idle();
  EXPECT_EQ(sum_stat(rt, "dead_letters"), 11u);
  EXPECT_EQ(sum_stat(rt, "actor_failures"), 1u);
  EXPECT_EQ(rt.submit([] { return 1; }).get(), 1) << "the worker goes on";
}

TEST(Actor, SupervisorRestartGivesFreshState) {
  strata::runtime rt(strata::test::workers(1));
  std::atomic<int> failures{0};
  rt.set_supervisor([&](const strata::actor_failure& f) {
    failures.fetch_add(1);
    return f.restarts < 2 ? strata::supervision::restart : strata::supervision::stop;
  });
  auto c = rt.spawn_actor<counter>();
  c.send(add{10});
  c.send(boom{});
  c.send(add{3});
  EXPECT_EQ(c.ask(get{}).get(), 3) << "restarted with fresh state";
  c.send(boom{});
  EXPECT_EQ(c.ask(get{}).get(), 0);
  c.send(boom{});  // third failure: stop
  EXPECT_THROW(c.ask(get{}).get(), strata::dead_letter_error);
  EXPECT_EQ(failures.load(), 3);
}

TEST(Actor, StoppedActorsSlotIsReusedUnderANewGeneration) {
  strata::runtime rt(strata::test::workers(1));
  struct stopper : strata::actor<stopper> {
    void receive(strata::actor_context& ctx, const get&) { ctx.stop(); }
  };
  auto old_ref = rt.submit([] {
                     auto s = strata::this_runtime()->spawn_actor<stopper>();
                     s.send(get{});
                     return s;
                   }).get();
  rt.wait_idle();
  auto fresh = rt.submit([] { return strata::this_runtime()->spawn_actor<counter>(); }).get();
  EXPECT_EQ(fresh.address().slot(), old_ref.address().slot());
  EXPECT_NE(fresh.address().generation(), old_ref.address().generation());
  old_ref.send(get{});  // the old address is dead: a dead letter, not the new actor
  fresh.send(add{4});
  EXPECT_EQ(fresh.ask(get{}).get(), 4);
  rt.wait_idle();
  EXPECT_EQ(sum_stat(rt, "dead_letters"), 1u);
}

// Same program, same trace: one worker, a seed, everything driven from a task.
std::vector<int> traced_run() {
  strata::config c = strata::test::workers(1);
  c.deterministic_seed = 42;
  strata::runtime rt(c);
  struct note {
    int from, value;
  };
  struct recorder : strata::actor<recorder> {
    std::vector<int>* trace;
    int id;
    std::vector<strata::actor_ref<recorder>> peers;
    recorder(std::vector<int>* t, int i) : trace(t), id(i) {}
    void receive(strata::actor_context&, const std::vector<strata::actor_ref<recorder>>& p) { peers = p; }
    void receive(strata::actor_context&, const note& n) {
      trace->push_back(id * 1000 + n.value);
      if (n.value > 0) {
        peers[static_cast<std::size_t>(n.value) % peers.size()].send(note{id, n.value - 1});
        peers[static_cast<std::size_t>(n.value * 7) % peers.size()].send(note{id, n.value / 2});
      }
    }
  };
  std::vector<int> trace;
  rt.submit([&] {
      std::vector<strata::actor_ref<recorder>> all;
      for (int i = 0; i < 5; ++i) all.push_back(strata::this_runtime()->spawn_actor<recorder>(&trace, i));
      for (auto& a : all) a.send(all);
      for (int i = 0; i < 5; ++i) all[static_cast<std::size_t>(i)].send(note{-1, 8 + i});
    }).get();
  rt.wait_idle();
  return trace;
}

TEST(Actor, DeterministicModeGivesTheSameTraceEveryRun) {
  const auto first = traced_run();
  EXPECT_GT(first.size(), 100u);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(traced_run(), first) << "run " << run;
}

TEST(Actor, AskFromInsideAnActorHelpsInsteadOfBlocking) {
  strata::runtime rt(strata::test::workers(1));  // one worker: a blocking get would deadlock
  struct relay : strata::actor<relay> {
    strata::actor_ref<counter> target;
    explicit relay(strata::actor_ref<counter> t) : target(t) {}
    long receive(strata::actor_context&, const get&) { return target.ask(get{}).get() + 1; }
  };
  auto c = rt.spawn_actor<counter>();
  c.send(add{41});
  auto r = rt.spawn_actor<relay>(c);
  EXPECT_EQ(r.ask(get{}).get(), 42);
}

TEST(Actor, TelemetryIsInTheStatsJson) {
  strata::runtime rt(strata::test::workers(2));
  auto c = rt.spawn_actor<counter>();
  c.send(add{1});
  c.ask(get{}).get();
  const auto j = strata::test::json_reader::parse(rt.stats().to_json());
  std::uint64_t actors = 0, remote = 0;
  for (const auto& w : j["workers"].arr) {
    for (const char* key : {"actors", "messages_local", "messages_remote", "mailbox_high_water", "dead_letters",
                            "actor_failures", "migrations_proposed", "migrations_done"}) {
      EXPECT_TRUE(w.has(key)) << key;
    }
    actors += static_cast<std::uint64_t>(w["actors"].num);
    remote += static_cast<std::uint64_t>(w["messages_remote"].num);
  }
  EXPECT_EQ(actors, 1u);
  EXPECT_EQ(remote, 2u);
}

TEST(Actor, BadUseIsAClearError) {
  strata::actor_ref<counter> empty;
  EXPECT_FALSE(empty.valid());
  try {
    empty.send(add{1});
    FAIL();
  } catch (const strata::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("empty actor_ref"), std::string::npos);
  }
  strata::runtime rt(strata::test::workers(2));
  strata::actor_ref<counter> forged(&rt.core(), strata::actor_address::make(3, 0, 1, 1));
  try {
    forged.send(add{1});
    FAIL();
  } catch (const strata::usage_error& e) {
    // Another rank's address, and no MPI session to reach it.
    EXPECT_NE(std::string(e.what()).find("actor 3:0:1#1 is on rank 3, and this rank (0) has no strata::mpi::session"),
              std::string::npos)
        << e.what();
  }
  strata::actor_ref<counter> never(&rt.core(), strata::actor_address::make(0, 1, 999, 1));
  EXPECT_THROW(never.ask(get{}).get(), strata::dead_letter_error);
  strata::config c = strata::test::workers(1);
  c.actor_budget = 0;
  EXPECT_THROW(strata::runtime{c}, strata::usage_error);
  rt.shutdown();
  auto late = strata::actor_ref<counter>(&rt.core(), strata::actor_address::make(0, 0, 1, 1));
  EXPECT_THROW(late.send(add{1}), strata::runtime_error) << "a send after shutdown is refused";
}

// A message whose move constructor throws on its n-th move: the first move
// builds the send's callable, the second puts it into a frame.
struct fragile {
  int moves_left;
  explicit fragile(int n) : moves_left(n) {}
  fragile(const fragile&) = default;
  fragile(fragile&& o) : moves_left(o.moves_left - 1) {
    if (moves_left < 0) throw std::runtime_error("fragile: moved once too often");
  }
};
// A message whose copy throws when asked to (sent as an lvalue, it is copied).
struct picky {
  bool refuse;
  explicit picky(bool r) : refuse(r) {}
  picky(const picky& o) : refuse(o.refuse) {
    if (refuse) throw std::runtime_error("picky: refused to be copied");
  }
  picky(picky&&) noexcept = default;
};
struct tally : strata::actor<tally> {
  long n = 0;
  void receive(strata::actor_context&, const fragile&) { ++n; }
  void receive(strata::actor_context&, const picky&) { ++n; }
  long receive(strata::actor_context&, const get&) { return n; }
};

TEST(Actor, AMessageWhoseCopyOrMoveThrowsReachesTheSenderAndLosesNoFrame) {
  strata::runtime rt(strata::test::workers(1));
  auto t = rt.spawn_actor<tally>();
  // From outside (a heap frame): 10^4 failures.
  for (int i = 0; i < 10000; ++i) EXPECT_THROW(t.send(fragile{1}), std::runtime_error);
  // From a task on the actor's worker (pooled frames, the same-worker send):
  // 10^4 failed moves and 10^4 failed copies, and 10^4 messages with one
  // move to spare, delivered once the task ends (10^4 frames alive at once).
  auto phase = [&rt, t] {
    return rt.submit([t] {
               int thrown = 0;
               for (int i = 0; i < 10000; ++i) {
                 try {
                   t.send(fragile{1});
                 } catch (const std::runtime_error&) {
                   ++thrown;
                 }
                 t.send(fragile{2});
                 const picky refused{true};
                 try {
                   t.send(refused);  // copied: throws before any frame is taken
                 } catch (const std::runtime_error&) {
                   ++thrown;
                 }
               }
               return thrown;
             }).get();
  };
  auto slabs = [&rt] { return rt.submit([] { return strata::detail::current_worker()->pool.slabs(); }).get(); };
  EXPECT_EQ(phase(), 20000);
  rt.wait_idle();  // nothing was counted for a failed send: returns
  const std::size_t slabs_after_one = slabs();
  EXPECT_EQ(phase(), 20000);
  rt.wait_idle();
  EXPECT_EQ(t.ask(get{}).get(), 20000);
  // The second phase reuses the first one's frames; a frame lost per
  // failure would need about 20 more slabs of 512.
  EXPECT_EQ(slabs(), slabs_after_one);
  EXPECT_EQ(sum_stat(rt, "dead_letters"), 0u);
  EXPECT_EQ(rt.stats().workers[0].counter("messages_local"), 20000u);
}

namespace migration {

struct where {};
struct who {};
struct seq_msg {
  unsigned sender;
  std::uint64_t seq;
};
struct ordered : strata::actor<ordered> {
  std::vector<std::uint64_t> next;
  std::uint64_t total = 0, out_of_order = 0;
  explicit ordered(unsigned senders) : next(senders, 0) {}
  void receive(strata::actor_context&, const seq_msg& m) {
    if (m.seq != next[m.sender]) ++out_of_order;
    next[m.sender] = m.seq + 1;
    ++total;
  }
  unsigned receive(strata::actor_context& ctx, const where&) { return ctx.worker().value; }
  std::uint64_t receive(strata::actor_context& ctx, const who&) { return ctx.self().bits(); }
  std::vector<std::uint64_t> receive(strata::actor_context&, const get&) { return {total, out_of_order}; }
};

TEST(ActorMigration, LosslessAndInOrderWhileSendersKeepSending) {
  strata::config c = strata::test::workers(3);
  c.monitor_period_ms = 0;  // only our own moves
  strata::runtime rt(c);
  auto a = rt.spawn_actor<ordered>(strata::affinity::elastic, strata::worker_id{0}, 2u);
  const std::uint64_t per = strata::test::scaled(200000);
  std::atomic<bool> go{false};
  std::vector<std::thread> senders;
  for (unsigned s = 0; s < 2; ++s) {
    senders.emplace_back([&, s] {
      while (!go.load()) std::this_thread::yield();
      for (std::uint64_t i = 0; i < per; ++i) a.send(seq_msg{s, i});
    });
  }
  go.store(true);
  unsigned moved = 0;
  for (int i = 0; i < 30; ++i) {
    const unsigned to = static_cast<unsigned>(i + 1) % 3;
    if (rt.migrate_actor(a, strata::worker_id{to}).get()) {
      ++moved;
      EXPECT_EQ(a.ask(where{}).get(), to) << "move " << i;
    }
  }
  for (auto& th : senders) th.join();
  const auto r = a.ask(get{}).get();
  EXPECT_EQ(r[0], 2 * per) << "messages lost";
  EXPECT_EQ(r[1], 0u) << "messages reordered by a migration";
  EXPECT_GE(moved, 20u) << "most moves happen between two messages";
  rt.wait_idle();
  EXPECT_EQ(sum_stat(rt, "migrations_done"), moved);
  EXPECT_EQ(sum_stat(rt, "dead_letters"), 0u);
}

// Path compression (forwarding.cpp): after many moves a message to the
// actor's address still takes one forward, so time per message does not
// grow with moves (the soak test shows the memory side: RSS stays flat).
TEST(ActorMigration, ManyMovesKeepOneHop) {
  strata::config c = strata::test::workers(3);
  c.monitor_period_ms = 0;
  strata::runtime rt(c);
  auto a = rt.spawn_actor<ordered>(strata::affinity::elastic, strata::worker_id{0}, 1u);
  unsigned moved = 0;
  std::uint64_t sent = 0;
  for (int i = 0; i < 600; ++i) {
    const unsigned to = 1 + static_cast<unsigned>(i % 2);  // never back home: every move after the first grows the chain
    if (rt.migrate_actor(a, strata::worker_id{to}).get()) ++moved;
    a.send(seq_msg{0, sent++});  // mail in flight while the home shortens its chain
  }
  EXPECT_NE(a.ask(where{}).get(), 0u);
  EXPECT_EQ(a.ask(who{}).get(), a.address().bits()) << "self() is the identity, wherever the actor runs";
  rt.wait_idle();
  const std::uint64_t forwards_before = sum_stat(rt, "forwards");
  constexpr std::uint64_t k_probe = 1000;
  for (std::uint64_t i = 0; i < k_probe; ++i) a.send(seq_msg{0, sent++});
  const auto r = a.ask(get{}).get();
  rt.wait_idle();
  // A move is refused while the actor handles the message just sent, or
  // when the request follows a hop the home has just released.
  EXPECT_GE(moved, 100u);
  EXPECT_EQ(r[0], sent) << "messages lost";
  EXPECT_EQ(r[1], 0u) << "messages reordered while the chain was shortened";
  // One forward per message (home -> actor), plus the ask's.
  EXPECT_LE(sum_stat(rt, "forwards") - forwards_before, k_probe + 1);
  EXPECT_EQ(sum_stat(rt, "dead_letters"), 0u);
}

TEST(ActorMigration, StickyActorsNeverMove) {
  strata::runtime rt(strata::test::workers(2));
  auto s = rt.spawn_actor<ordered>(strata::affinity::sticky, strata::worker_id{0}, 1u);
  EXPECT_FALSE(rt.migrate_actor(s, strata::worker_id{1}).get());
  EXPECT_EQ(s.ask(where{}).get(), 0u);
  EXPECT_THROW(rt.migrate_actor(s, strata::worker_id{2}), strata::usage_error);
}

// Busy work per message, about 20 microseconds.
struct spin_msg {};
struct busy : strata::actor<busy> {
  void receive(strata::actor_context&, const spin_msg&) {
    const auto until = std::chrono::steady_clock::now() + 20us;
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  unsigned receive(strata::actor_context& ctx, const where&) { return ctx.worker().value; }
};

TEST(ActorMigration, SkewMakesTheMonitorMoveAnElasticActor) {
  strata::config c = strata::test::workers(2);
  c.monitor_period_ms = 2;
  strata::runtime rt(c);
  // Three busy actors on worker 0, worker 1 idle: one of the two elastic
  // ones must move; the sticky one never.
  auto e1 = rt.spawn_actor<busy>(strata::affinity::elastic, strata::worker_id{0});
  auto e2 = rt.spawn_actor<busy>(strata::affinity::elastic, strata::worker_id{0});
  auto st = rt.spawn_actor<busy>(strata::affinity::sticky, strata::worker_id{0});
  // pinned_mpsc runs no monitor: the same skew for half a second moves nobody.
  // Elsewhere the monitor needs three periods in a row with worker 0 busy and
  // worker 1 light, which a loaded machine breaks up: alone a move comes
  // within 50 ms, beside two CPU hogs on this 2-vCPU VM in 0.5 to 7.7 s.
  const bool pinned = strata::test::policy() == strata::policy::pinned_mpsc;
  const auto deadline = std::chrono::steady_clock::now() + (pinned ? 500ms : 40s);
  bool moved = false;
  while (!moved && std::chrono::steady_clock::now() < deadline) {
    for (int i = 0; i < 50; ++i) {
      e1.send(spin_msg{});
      e2.send(spin_msg{});
      st.send(spin_msg{});
    }
    (void)st.ask(where{}).get();  // keeps the backlog bounded (FIFO: the 50 went first)
    moved = sum_stat(rt, "migrations_done") > 0;
  }
  if (pinned) {
    EXPECT_FALSE(moved);
    EXPECT_EQ(sum_stat(rt, "migrations_proposed"), 0u);
    EXPECT_EQ(e1.ask(where{}).get() + e2.ask(where{}).get() + st.ask(where{}).get(), 0u) << "all stay on worker 0";
    return;
  }
  ASSERT_TRUE(moved) << "no migration within 40 s of skew";
  EXPECT_GE(sum_stat(rt, "migrations_proposed"), 1u);
  const unsigned w1 = e1.ask(where{}).get(), w2 = e2.ask(where{}).get();
  EXPECT_TRUE(w1 == 1 || w2 == 1) << "an elastic actor moved to the idle worker";
  EXPECT_EQ(st.ask(where{}).get(), 0u) << "the sticky actor stays";
}

}  // namespace migration

}  // namespace
