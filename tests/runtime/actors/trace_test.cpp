// The timeline (STRATA_TRACE, config.trace_file): the file is trace-event
// JSON; on every thread the timestamps are monotonic and the spans nest
// (every begin has its end); the events count what stats() counts (task
// spans and actor turns against tasks executed, steals, parks, messages to
// other workers); a full ring drops its oldest events and says how many;
// bad values and paths are clear errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <strata/strata.hpp>

#include "env_guard.hpp"
#include "json_reader.hpp"
#include "runtime_config.hpp"

namespace {

struct ball {
  int left;
};
struct player : strata::actor<player> {
  strata::actor_ref<player> other;
  long hits = 0;
  void receive(strata::actor_context&, const strata::actor_ref<player>& o) { other = o; }
  void receive(strata::actor_context&, const ball& b) {
    ++hits;
    if (b.left > 0) other.send(ball{b.left - 1});
  }
  long receive(strata::actor_context&, const int&) { return hits; }
};

long fib(long n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  strata::task_group g;
  g.run([&] { a = fib(n - 1); });
  b = fib(n - 2);
  g.wait();
  return a + b;
}

std::string temp_path(const char* what) {
  return (std::filesystem::temp_directory_path() / (std::string("strata-") + what + "-" +
                                                    std::to_string(getpid()) + ".json"))
      .string();
}

strata::test::json read_trace(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return strata::test::json_reader::parse(ss.str());
}

struct per_thread {
  std::uint64_t tasks = 0, turns = 0, turn_messages = 0, steals = 0, stolen = 0, parks = 0, wakes = 0,
                messages = 0, events = 0;
  std::string name;
};

// Checks the structure (monotonic, nested) and counts the events by thread.
std::map<long, per_thread> check_and_count(const strata::test::json& doc) {
  std::map<long, per_thread> out;
  std::map<long, double> last_ts;
  // Per thread: the ends of the spans enclosing now, in whole nanoseconds. The file writes microseconds
  // with three decimals, so rounding to ns is exact; adding the doubles is not (ts + dur of a span
  // can land a hair past the next span's ts and make adjacent spans look nested).
  std::map<long, std::vector<long long>> open_ends;
  for (const auto& e : doc["traceEvents"].arr) {
    const std::string ph = e["ph"].str;
    const long tid = static_cast<long>(e["tid"].num);
    if (ph == "M") {
      if (e["name"].str == "thread_name") out[tid].name = e["args"]["name"].str;
      continue;
    }
    EXPECT_TRUE(ph == "X" || ph == "i") << "phase " << ph;
    const double ts = e["ts"].num;
    EXPECT_GE(ts, 0.0);
    if (last_ts.count(tid) != 0) {
      EXPECT_GE(ts, last_ts[tid]) << "timestamps go back on thread " << tid;
    }
    last_ts[tid] = ts;
    ++out[tid].events;
    auto& ends = open_ends[tid];
    const long long ts_ns = std::llround(ts * 1000.0);
    while (!ends.empty() && ends.back() <= ts_ns) ends.pop_back();
    const std::string name = e["name"].str;
    per_thread& p = out[tid];
    if (ph == "X") {
      const long long end = ts_ns + std::llround(e["dur"].num * 1000.0);
      EXPECT_GE(e["dur"].num, 0.0);
      // Nested: a span that starts inside another ends inside it too.
      if (!ends.empty()) {
        EXPECT_LE(end, ends.back()) << name << " at " << ts << " on thread " << tid;
      }
      ends.push_back(end);
      if (name == "task") ++p.tasks;
      if (name == "parked") ++p.parks;
      if (name == "actor turn") {
        ++p.turns;
        p.turn_messages += static_cast<std::uint64_t>(e["args"]["messages"].num);
      }
    } else {
      if (name == "steal") {
        ++p.steals;
        p.stolen += static_cast<std::uint64_t>(e["args"]["tasks"].num);
        EXPECT_FALSE(e["args"]["kind"].str.empty());
      }
      if (name == "wake") ++p.wakes;
      if (name == "actor message") ++p.messages;
    }
  }
  return out;
}

TEST(Trace, TheFileMatchesStats) {
  const std::string path = std::getenv("STRATA_TEST_TRACE_KEEP") ? std::getenv("STRATA_TEST_TRACE_KEEP")
                                                                  : temp_path("trace");
  strata::config c = strata::test::workers(2);
  c.trace_file = path;
  c.monitor_period_ms = 0;  // no migration: every message goes straight to its actor's worker
  strata::runtime rt{c};
  long f = 0;
  rt.submit([&] { f = fib(18); }).get();
  EXPECT_EQ(f, 2584);
  auto a = rt.spawn_actor<player>(strata::affinity::sticky, strata::worker_id{0});
  auto b = rt.spawn_actor<player>(strata::affinity::sticky, strata::worker_id{1});
  a.send(b);
  b.send(a);
  a.send(ball{999});  // 1000 hits, alternating between the two workers
  rt.wait_idle();
  EXPECT_EQ(a.ask(0).get() + b.ask(0).get(), 1000);
  rt.shutdown();
  const strata::runtime_stats s = rt.stats();

  const strata::test::json doc = read_trace(path);
  EXPECT_EQ(doc["otherData"]["dropped_events"].num, 0.0);
  EXPECT_EQ(doc["otherData"]["workers"].num, 2.0);
  const auto threads = check_and_count(doc);
  std::uint64_t tasks = 0, turn_messages = 0, steals = 0, stolen = 0, parks = 0, messages = 0, wakes = 0;
  for (const auto& [tid, p] : threads) {
    tasks += p.tasks;
    turn_messages += p.turn_messages;
    steals += p.steals;
    stolen += p.stolen;
    parks += p.parks;
    messages += p.messages;
    wakes += p.wakes;
  }
  std::uint64_t executed = 0, stat_steals = 0, stat_parks = 0, remote = 0;
  for (const auto& w : s.workers) {
    ASSERT_EQ(threads.count(w.worker), 1u) << "worker " << w.worker << " has a track";
    EXPECT_NE(threads.at(w.worker).name.find("worker " + std::to_string(w.worker)), std::string::npos);
    // A worker's executed count is its task spans plus the messages its
    // actors handled (no parallel_invoke here: no inline joins).
    EXPECT_EQ(threads.at(w.worker).tasks + threads.at(w.worker).turn_messages, w.tasks_executed) << w.worker;
    executed += w.tasks_executed;
    for (auto n : w.steals_by_tier) stat_steals += n;
    stat_parks += w.parks;
    remote += w.counter("messages_remote");
  }
  EXPECT_EQ(tasks + turn_messages, executed);
  EXPECT_GE(turn_messages, 1000u + 2u + 2u);  // the balls, the two introductions, the two asks
  EXPECT_EQ(steals, stat_steals);
  EXPECT_EQ(stolen, s.total_stolen());
  EXPECT_EQ(parks, stat_parks);
  EXPECT_EQ(messages, remote);
  EXPECT_GE(messages, 1000u);  // every ball crossed workers (main thread's sends too)
  std::printf("[ trace    ] %llu task spans, %llu actor messages in turns, %llu steals, %llu parks, %llu wakes, "
              "%llu cross-worker messages, %zu threads\n",
              static_cast<unsigned long long>(tasks), static_cast<unsigned long long>(turn_messages),
              static_cast<unsigned long long>(steals), static_cast<unsigned long long>(parks),
              static_cast<unsigned long long>(wakes), static_cast<unsigned long long>(messages), threads.size());
  if (std::getenv("STRATA_TEST_TRACE_KEEP") == nullptr) std::remove(path.c_str());
}

TEST(Trace, AFullRingKeepsTheNewestAndSaysHowManyWereDropped) {
  const std::string path = temp_path("trace-ring");
  strata::config c = strata::test::workers(1);
  c.trace_file = path;
  c.trace_events = 1024;
  std::uint64_t executed = 0, parks = 0;
  {
    strata::runtime rt{c};
    strata::task_group g{rt};
    for (int i = 0; i < 5000; ++i) g.run([] {});
    g.wait();
    // The newest events: turns of an actor on the one worker, after every task above.
    auto p = rt.spawn_actor<player>(strata::affinity::sticky, strata::worker_id{0});
    for (int i = 0; i < 10; ++i) p.send(ball{0});
    EXPECT_EQ(p.ask(0).get(), 10);
    rt.shutdown();
    const strata::runtime_stats s = rt.stats();
    executed = s.workers.at(0).tasks_executed;
    parks = s.workers.at(0).parks;
  }
  const strata::test::json doc = read_trace(path);
  const auto dropped = static_cast<std::uint64_t>(doc["otherData"]["dropped_by_thread"]["0"].num);
  EXPECT_EQ(static_cast<std::uint64_t>(doc["otherData"]["events_per_thread"].num), 1024u);
  const auto threads = check_and_count(doc);
  const per_thread& w = threads.at(0);
  // What worker 0 wrote into its ring, at least: a span per task, one per actor turn (executed counts
  // each message of a turn) and one per park.
  const std::uint64_t recorded = executed - w.turn_messages + w.turns + parks;
  // The ring is full and every event the worker wrote is either kept or counted as dropped (it may also
  // write wake events, so recorded is a lower bound). How many of the kept events are task spans depends
  // on how often the worker parked while main submitted (959 of 1024 once under ASan), so all are counted.
  EXPECT_EQ(w.events, 1024u);
  EXPECT_GE(w.events + dropped, recorded);
  EXPECT_GE(dropped, 5000u - 1024u);
  EXPECT_EQ(w.tasks + w.turns + w.parks + w.wakes + w.steals + w.messages, w.events) << "an unknown event kind";
  // The newest are kept: the actor's turns came last, so they are all in the ring.
  EXPECT_EQ(w.turn_messages, 10u + 1u);  // the balls and the ask
  std::remove(path.c_str());
}

TEST(Trace, PercentNGivesEachRuntimeItsOwnFile) {
  const std::string pattern = temp_path("tracen-%n");
  std::vector<std::string> files;
  for (int i = 0; i < 2; ++i) {
    strata::config c = strata::test::workers(1);
    c.trace_file = pattern;
    strata::runtime rt{c};
    rt.submit([] {}).get();
  }
  std::size_t found = 0;
  const std::string stem = std::filesystem::path(pattern).filename().string();
  const std::string prefix = stem.substr(0, stem.find("%n"));
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(pattern).parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.find(std::to_string(getpid())) != std::string::npos) {
      const auto threads = check_and_count(read_trace(e.path().string()));
      EXPECT_EQ(threads.at(0).tasks, 1u) << name;
      std::filesystem::remove(e.path());
      ++found;
    }
  }
  EXPECT_EQ(found, 2u) << "one file per runtime from " << pattern;
}

TEST(Trace, OffWritesNothingAndBadValuesAreClearErrors) {
  {
    strata::runtime rt{strata::test::workers(1)};
    rt.submit([] {}).get();
  }
  strata::config c = strata::test::workers(1);
  c.trace_file = "/nonexistent-dir/strata-trace.json";
  try {
    strata::runtime rt{c};
    ADD_FAILURE() << "a trace file that cannot be written was accepted";
  } catch (const strata::config_error& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_TRACE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir"), std::string::npos) << e.what();
  }
  strata::test::env_guard g;
  for (const char* bad : {"12abc", "100", "-5", "99999999999"}) {
    g.set("STRATA_TRACE_EVENTS", bad);
    try {
      (void)strata::runtime_config::from_env();
      ADD_FAILURE() << "STRATA_TRACE_EVENTS=" << bad << " was accepted";
    } catch (const strata::config_error& e) {
      EXPECT_NE(std::string(e.what()).find("STRATA_TRACE_EVENTS"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("1024"), std::string::npos) << e.what();
    }
  }
  g.set("STRATA_TRACE_EVENTS", "4096");
  g.set("STRATA_TRACE", "run-%p.json");
  const auto rc = strata::runtime_config::from_env();
  EXPECT_EQ(rc.trace_events, 4096u);
  EXPECT_EQ(rc.trace_file, "run-%p.json");
}

}  // namespace
