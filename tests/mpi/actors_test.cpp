// Remote actors under mpirun (2 to 4 ranks): publish and actor_at (found,
// waited for, missing, of another type), send and ask across ranks with
// the local guarantees (FIFO per sender and receiver from several threads,
// one message at a time, dead letters, exceptions), large messages, actors
// that forward to other ranks inside receive (counted by wait_quiescent),
// and the errors of messages that cannot cross.
//
// Environment: STRATA_TEST_MPI_LEVEL=funneled|multiple (default multiple;
// funneled runs the bridge on the main thread, inside the session's calls).
// Every rank runs every test; each test is collective.
#include <gtest/gtest.h>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <strata/mpi.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/task_group.hpp>

#include "runtime_config.hpp"

namespace {

strata::runtime* g_rt = nullptr;
strata::mpi::session* g_mpi = nullptr;

bool caller_mode() { return g_mpi->progress_kind() == strata::mpi::progress_mode::caller; }

std::uint64_t dead_letters() {
  std::uint64_t n = 0;
  for (const auto& w : g_rt->stats().workers) n += w.counter("dead_letters");
  return n;
}

template <class T>
T get(strata::future<T>& f) {
  return g_mpi->get(f);
}
template <class T>
T get(strata::future<T>&& f) {
  return g_mpi->get(f);
}

// ---- messages and actors -----------------------------------------------------------

struct tick {
  std::uint32_t sender;  // rank * k_threads + thread
  std::uint64_t seq;
  std::uint64_t value;
};
struct total {};
struct order_errors {};
struct stop_now {};
struct explode {
  int code;
};
struct sum_vector {
  std::vector<double> v;
};
struct sized_tick {  // a tick with a payload: small ones go in batches, big ones alone
  std::uint32_t sender;
  std::uint64_t seq;
  std::vector<std::uint8_t> pad;
};
struct whoami {};
struct with_map {  // std::map does not cross ranks
  std::map<int, int> m;
};

constexpr std::uint32_t k_max_senders = 64;

// Counts ticks; checks that each sender's come in the order sent, and that
// no two messages run at once.
struct counter : strata::actor<counter> {
  std::uint64_t sum = 0;
  std::uint64_t errors = 0;
  std::vector<std::uint64_t> next = std::vector<std::uint64_t>(k_max_senders, 0);
  std::atomic<int> inside{0};
  void receive(strata::actor_context&, const tick& t) {
    if (inside.fetch_add(1) != 0) errors++;
    if (t.sender >= k_max_senders || t.seq != next[t.sender]) errors++;
    if (t.sender < k_max_senders) next[t.sender] = t.seq + 1;
    sum += t.value;
    inside.fetch_sub(1);
  }
  void receive(strata::actor_context&, const sized_tick& t) {
    if (inside.fetch_add(1) != 0) errors++;
    if (t.sender >= k_max_senders || t.seq != next[t.sender]) errors++;
    if (t.sender < k_max_senders) next[t.sender] = t.seq + 1;
    for (std::uint8_t b : t.pad) {
      if (b != static_cast<std::uint8_t>(t.seq)) errors++;
    }
    sum += t.pad.size();
    inside.fetch_sub(1);
  }
  std::uint64_t receive(strata::actor_context&, const total&) { return sum; }
  std::uint64_t receive(strata::actor_context&, const order_errors&) { return errors; }
  void receive(strata::actor_context& ctx, const stop_now&) { ctx.stop(); }
  int receive(strata::actor_context&, const explode& e) { throw std::runtime_error("boom " + std::to_string(e.code)); }
  double receive(strata::actor_context&, const sum_vector& s) { return std::accumulate(s.v.begin(), s.v.end(), 0.0); }
  std::string receive(strata::actor_context& ctx, const whoami&) {
    return "rank " + std::to_string(g_mpi->rank()) + " worker " + std::to_string(ctx.worker().value);
  }
  void receive(strata::actor_context&, const with_map&) {}
};

struct relay_on {
  std::uint32_t hops;
  std::uint64_t value;
};
struct relay_total {};
// Forwards each message to the next rank's relay until its hops run out.
struct relay : strata::actor<relay> {
  std::uint64_t seen = 0;
  void receive(strata::actor_context&, const relay_on& m) {
    seen += m.value;
    if (m.hops == 0) return;
    const int next = (g_mpi->rank() + 1) % g_mpi->size();
    g_mpi->actor_at<relay>(next, "relay").send(relay_on{m.hops - 1, m.value});
  }
  std::uint64_t receive(strata::actor_context&, const relay_total&) { return seen; }
};

struct other : strata::actor<other> {
  void receive(strata::actor_context&, const total&) {}
};

// ---- tests ---------------------------------------------------------------------

// Published by main() before the tests: "counter" on every rank.
strata::actor_ref<counter> g_local;

TEST(Names, ActorAtFindsEveryRanksActor) {
  const int n = g_mpi->size(), me = g_mpi->rank();
  for (int r = 0; r < n; ++r) {
    auto c = g_mpi->actor_at<counter>(r, "counter");
    EXPECT_EQ(static_cast<int>(c.address().rank()), r);
    EXPECT_EQ(c.remote(), r != me);
    const std::string who = get(c.ask(whoami{}));
    EXPECT_EQ(who.rfind("rank " + std::to_string(r) + " worker", 0), 0u) << who;
  }
  EXPECT_EQ(g_mpi->actor_at<counter>(me, "counter"), g_local);
  g_mpi->wait_quiescent();
}

TEST(Names, MissingNamesAndWrongTypesAreErrors) {
  const int peer = (g_mpi->rank() + 1) % g_mpi->size();
  try {
    (void)g_mpi->actor_at<counter>(peer, "no-such-actor");
    ADD_FAILURE() << "no error";
  } catch (const strata::usage_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank " + std::to_string(peer)), std::string::npos) << what;
    EXPECT_NE(what.find("\"no-such-actor\""), std::string::npos) << what;
    EXPECT_NE(what.find("\"counter\""), std::string::npos) << what << " (what that rank published)";
  }
  try {
    (void)g_mpi->actor_at<other>(peer, "counter");
    ADD_FAILURE() << "no error";
  } catch (const strata::usage_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("counter"), std::string::npos) << what;
    EXPECT_NE(what.find("other"), std::string::npos) << what;
  }
  EXPECT_THROW((void)g_mpi->actor_at<counter>(g_mpi->size(), "counter"), strata::usage_error);
  EXPECT_THROW(g_mpi->publish(g_rt->spawn_actor<counter>(), "counter"), strata::usage_error) << "published twice";
  EXPECT_THROW(g_mpi->publish(g_local, ""), strata::usage_error);
  g_mpi->wait_quiescent();
}

TEST(Names, ActorAtWaitsForALatePublish) {
  const int me = g_mpi->rank(), n = g_mpi->size();
  const std::string name = "late-" + std::to_string(me);
  if (me % 2 == 0) {
    // Publish after the others started looking (they wait up to lookup_ms).
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(150);
    while (std::chrono::steady_clock::now() < until) {
      if (!caller_mode() || g_mpi->progress() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  auto mine = g_rt->spawn_actor<counter>();
  g_mpi->publish(mine, name);
  const int peer = (me + 1) % n;
  auto c = g_mpi->actor_at<counter>(peer, "late-" + std::to_string(peer));
  c.send(tick{0, 0, 5});
  EXPECT_EQ(get(c.ask(total{})), 5u);
  g_mpi->wait_quiescent();
}

// Every rank sends from k_threads threads (the main thread and tasks on the
// workers) to every rank's counter; per-sender order and the totals hold.
TEST(Messages, FifoPerSenderFromSeveralThreadsAndExactTotals) {
  const int n = g_mpi->size(), me = g_mpi->rank();
  constexpr std::uint32_t k_threads = 3;
  const std::uint64_t per = 20000;
  ASSERT_LE(static_cast<std::uint32_t>(n) * k_threads, k_max_senders);
  const std::uint64_t before = get(g_local.ask(total{}));
  // A fresh counter per rank: sequence numbers start from 0.
  auto mine = g_rt->spawn_actor<counter>();
  g_mpi->publish(mine, "fifo");
  std::vector<strata::actor_ref<counter>> to;
  for (int r = 0; r < n; ++r) to.push_back(g_mpi->actor_at<counter>(r, "fifo"));
  const auto sender = [&](std::uint32_t t) {
    const std::uint32_t id = static_cast<std::uint32_t>(me) * k_threads + t;
    for (std::uint64_t i = 0; i < per; ++i) {
      for (const auto& c : to) c.send(tick{id, i, i + 1});
    }
  };
  strata::task_group g{*g_rt};
  for (std::uint32_t t = 1; t < k_threads; ++t) g.run([&sender, t] { sender(t); });
  sender(0);
  g.wait();
  g_mpi->wait_quiescent();
  const std::uint64_t want = static_cast<std::uint64_t>(n) * k_threads * (per * (per + 1) / 2);
  EXPECT_EQ(get(mine.ask(total{})), want);
  EXPECT_EQ(get(mine.ask(order_errors{})), 0u);
  EXPECT_EQ(get(g_local.ask(total{})), before);
  g_mpi->wait_quiescent();
}

// Small messages are delivered in batches, messages above the batch's copy
// limit one by one, and very large ones take the large path: none
// overtakes another of its sender. With four ranks, every rank's large
// messages reach every other one at once (a receiver that took one
// source's large buffer ahead of its notice lost it and hung).
TEST(Messages, FifoAcrossSmallBigAndLargeMessages) {
  const int n = g_mpi->size(), me = g_mpi->rank();
  auto mine = g_rt->spawn_actor<counter>();
  g_mpi->publish(mine, "mixed");
  std::vector<strata::actor_ref<counter>> to;
  for (int r = 0; r < n; ++r) to.push_back(g_mpi->actor_at<counter>(r, "mixed"));
  const std::uint64_t per = 3000;
  const std::size_t sizes[] = {0, 16, 1100, 0, 3000, 8, 0, 900};
  std::uint64_t bytes_each = 0;
  for (std::uint64_t i = 0; i < per; ++i) {
    const std::size_t size = i % 500 == 499 ? 100'000 : sizes[i % std::size(sizes)];
    bytes_each += size;
    const sized_tick t{static_cast<std::uint32_t>(me), i, std::vector<std::uint8_t>(size, static_cast<std::uint8_t>(i))};
    for (const auto& c : to) c.send(t);
  }
  g_mpi->wait_quiescent();
  EXPECT_EQ(get(mine.ask(order_errors{})), 0u);
  EXPECT_EQ(get(mine.ask(total{})), static_cast<std::uint64_t>(n) * bytes_each);
  g_mpi->wait_quiescent();
}

TEST(Messages, AskFromAWorkerTask) {
  if (caller_mode()) GTEST_SKIP() << "a worker cannot drive progress under FUNNELED";
  const int peer = (g_mpi->rank() + 1) % g_mpi->size();
  auto c = g_mpi->actor_at<counter>(peer, "counter");
  auto f = g_rt->submit([c] { return c.ask(whoami{}).get(); });
  EXPECT_EQ(f.get().rfind("rank " + std::to_string(peer), 0), 0u);
  g_mpi->wait_quiescent();
}

TEST(Messages, ExceptionsAndDeadLetters) {
  const int me = g_mpi->rank(), n = g_mpi->size(), peer = (me + 1) % n;
  auto victim = g_rt->spawn_actor<counter>();
  g_mpi->publish(victim, "victim");
  g_mpi->wait_quiescent();  // every rank's victim is published
  auto v = g_mpi->actor_at<counter>(peer, "victim");
  try {
    (void)get(v.ask(explode{7}));
    ADD_FAILURE() << "no exception";
  } catch (const strata::mpi::remote_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("boom 7"), std::string::npos) << what;
    EXPECT_NE(what.find("counter"), std::string::npos) << what;
    EXPECT_NE(what.find("actor " + std::to_string(peer) + ":"), std::string::npos) << what;
  }
  // The exception poisoned the victim (the default supervisor stops it):
  // what follows is a dead letter, counted on the victim's rank.
  g_mpi->wait_quiescent();
  const auto dead_before = dead_letters();
  // Collective, so no rank sends before every rank has read its count (the
  // dead letters here come from the rank before).
  g_mpi->wait_quiescent();
  v.send(tick{0, 0, 1});
  EXPECT_THROW((void)get(v.ask(total{})), strata::dead_letter_error);
  g_mpi->wait_quiescent();
  EXPECT_EQ(dead_letters(), dead_before + 2);

  // A stop by message, then an ask behind it (FIFO): a dead letter.
  auto s = g_rt->spawn_actor<counter>();
  g_mpi->publish(s, "stopped");
  g_mpi->wait_quiescent();
  auto sp = g_mpi->actor_at<counter>(peer, "stopped");
  sp.send(stop_now{});
  EXPECT_THROW((void)get(sp.ask(total{})), strata::dead_letter_error);
  // An address that was never an actor there.
  auto ghost = strata::actor_ref<counter>(&g_rt->core(), strata::actor_address::make(peer, 0, 99999, 3));
  EXPECT_THROW((void)get(ghost.ask(total{})), strata::dead_letter_error);
  g_mpi->wait_quiescent();
}

TEST(Messages, LargeMessagesAndReplies) {
  const int peer = (g_mpi->rank() + 1) % g_mpi->size();
  auto c = g_mpi->actor_at<counter>(peer, "counter");
  std::vector<double> v(300'000);  // 2.4 MB: the large path
  std::iota(v.begin(), v.end(), 1.0);
  const double want = 300'000.0 * 300'001.0 / 2;
  EXPECT_DOUBLE_EQ(get(c.ask(sum_vector{v})), want);
  EXPECT_DOUBLE_EQ(get(c.ask(sum_vector{{1.0, 2.0}})), 3.0);
  g_mpi->wait_quiescent();
}

TEST(Messages, TypesThatCannotCrossAreUsageErrors) {
  const int peer = (g_mpi->rank() + 1) % g_mpi->size();
  auto c = g_mpi->actor_at<counter>(peer, "counter");
  try {
    c.send(with_map{{{1, 2}}});
    ADD_FAILURE() << "no error";
  } catch (const strata::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("with_map"), std::string::npos) << e.what();
  }
  g_local.send(with_map{{{1, 2}}});  // locally it is an ordinary message
  g_mpi->wait_quiescent();
}

// Chains of actor messages around the ring, sent from inside receive:
// wait_quiescent returns only when every hop has run.
TEST(Quiescence, RelaysAroundTheRingAreAllCounted) {
  const int n = g_mpi->size();
  auto mine = g_rt->spawn_actor<relay>();
  g_mpi->publish(mine, "relay");
  g_mpi->wait_quiescent();
  const std::uint32_t hops = 40;
  const std::uint64_t chains = 200;
  auto next = g_mpi->actor_at<relay>((g_mpi->rank() + 1) % n, "relay");
  for (std::uint64_t i = 0; i < chains; ++i) next.send(relay_on{hops, 1});
  g_mpi->wait_quiescent();
  // Each rank's chains visit hops+1 relays; over all ranks every relay sees
  // the same share.
  const std::uint64_t seen = get(mine.ask(relay_total{}));
  std::uint64_t all = 0;
  if (g_mpi->level() == strata::mpi::thread_level::serialized) {
    g_mpi->serialized([&] { return MPI_Allreduce(&seen, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD); });
  } else {
    MPI_Allreduce(&seen, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  }
  EXPECT_EQ(all, static_cast<std::uint64_t>(n) * chains * (hops + 1));
  g_mpi->wait_quiescent();
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* lv = std::getenv("STRATA_TEST_MPI_LEVEL");
  const bool funneled = lv != nullptr && std::string(lv) == "funneled";
  int provided = 0;
  MPI_Init_thread(&argc, &argv, funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_MULTIPLE, &provided);
  int rc = 0;
  {
    strata::runtime rt{strata::test::workers(2)};
    strata::mpi::config c = strata::mpi::config::from_env();
    c.lookup_ms = 400;
    strata::mpi::session mpi{rt, c};
    g_rt = &rt;
    g_mpi = &mpi;
    g_local = rt.spawn_actor<counter>();
    mpi.publish(g_local, "counter");
    mpi.wait_quiescent();
    if (mpi.rank() == 0) {
      std::printf("[ session ] %d ranks, %s, progress %s\n", mpi.size(), mpi.stats().thread_level.c_str(),
                  mpi.stats().progress.c_str());
    }
    rc = RUN_ALL_TESTS();
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = worst;
    mpi.wait_quiescent();
    g_local = {};
    g_mpi = nullptr;
  }
  MPI_Finalize();
  return rc;
}
