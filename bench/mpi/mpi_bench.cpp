// strata-bench-mpi: the bridge against raw MPI, side by side in one run,
// under mpirun with 2 ranks (run.sh does it). Every figure is a median
// over --reps repetitions; every result is checked (echoed bytes, counts,
// sums), and a wrong one fails the run.
//
//   pingpong  round trip of an N-byte payload, 0 B .. 1 MiB:
//             raw      MPI_Send / MPI_Recv
//             strata   submit_at(peer, echo, bytes).get() (the remote
//                      function runs inline on the peer's progress thread)
//             strata-actor  ask on the peer's echo actor (actor_at): the
//                      message runs on a worker of the peer
//   rate      8-byte messages from rank 0 to rank 1:
//             raw      MPI_Isend windows of 64, one MPI_Waitall per window
//             raw-coalesced  the ceiling: items packed by hand into 64 KiB
//                      buffers, one MPI_Send each
//             strata   post_at(1, count, value) per item (coalesced by the
//                      bridge), then wait_quiescent
//             strata-actor  send(tally{value}) per item to rank 1's actor
//   quiescence  wait_quiescent right after one message: the time and the
//             waves it took
//   stencil, histogram  distributed workloads against MPI + OpenMP and
//             MPI_Alltoallv (workloads.cpp)
//
// Output: one line per measurement, then a JSON object per line with
// --json FILE.
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <strata/mpi.hpp>

#include "common.hpp"

namespace strata_bench_mpi {
void run_stencil(strata::runtime& rt, strata::mpi::session& mpi, const options& o);
void run_histogram(strata::runtime& rt, strata::mpi::session& mpi, const options& o);
}  // namespace strata_bench_mpi

using namespace strata_bench_mpi;

namespace {

std::vector<std::uint8_t> echo(std::vector<std::uint8_t> v) { return v; }
STRATA_MPI_REMOTE_INLINE(echo);

std::uint64_t g_count = 0, g_sum = 0;  // the owner thread only (inline)
void count(std::uint64_t v) {
  ++g_count;
  g_sum += v;
}
STRATA_MPI_REMOTE_INLINE(count);

// The actor flavour: an ask answered by an actor on the peer's worker, and
// 8-byte sends counted by an actor.
struct payload {
  std::vector<std::uint8_t> bytes;
};
struct tally {
  std::uint64_t value;
};
struct read_tally {};
struct echo_actor : strata::actor<echo_actor> {
  std::uint64_t count = 0, sum = 0;
  std::vector<std::uint8_t> receive(strata::actor_context&, const payload& p) { return p.bytes; }
  void receive(strata::actor_context&, const tally& t) {
    ++count;
    sum += t.value;
  }
  std::pair<std::uint64_t, std::uint64_t> receive(strata::actor_context&, const read_tally&) { return {count, sum}; }
};

// --- pingpong -----------------------------------------------------------------

double raw_pingpong(std::size_t bytes, int iters) {
  std::vector<std::uint8_t> buf(std::max<std::size_t>(bytes, 1), 7), in(buf.size());
  const int peer = 1 - g_rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  for (int i = 0; i < iters; ++i) {
    if (g_rank == 0) {
      MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, peer, 5, MPI_COMM_WORLD);
      MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(in.data(), static_cast<int>(bytes), MPI_BYTE, peer, 5, MPI_COMM_WORLD);
    }
  }
  const double us = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() / iters;
  if (g_rank == 0 && bytes > 0 && in[bytes - 1] != 7) wrong("raw pingpong payload");
  return us;
}

double strata_pingpong(strata::mpi::session& mpi, std::size_t bytes, int iters) {
  std::vector<std::uint8_t> payload(bytes);
  for (std::size_t i = 0; i < bytes; ++i) payload[i] = static_cast<std::uint8_t>(i * 13);
  mpi.serialized([] { return MPI_Barrier(MPI_COMM_WORLD); });
  double us = 0;
  if (g_rank == 0) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < iters; ++i) {
      auto f = mpi.submit_at(1, echo, payload);
      auto back = mpi.get(f);
      if (back.size() != bytes || (bytes > 0 && back[bytes - 1] != payload[bytes - 1])) {
        wrong("strata pingpong payload");
      }
    }
    us = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() / iters;
  }
  mpi.wait_quiescent();
  return us;
}

double actor_pingpong(strata::mpi::session& mpi, const strata::actor_ref<echo_actor>& peer, std::size_t bytes,
                      int iters) {
  payload p;
  p.bytes.resize(bytes);
  for (std::size_t i = 0; i < bytes; ++i) p.bytes[i] = static_cast<std::uint8_t>(i * 13);
  mpi.serialized([] { return MPI_Barrier(MPI_COMM_WORLD); });
  double us = 0;
  if (g_rank == 0) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < iters; ++i) {
      auto f = peer.ask(p);
      auto back = mpi.get(f);
      if (back.size() != bytes || (bytes > 0 && back[bytes - 1] != p.bytes[bytes - 1])) wrong("actor pingpong payload");
    }
    us = std::chrono::duration<double, std::micro>(clock_type::now() - t0).count() / iters;
  }
  mpi.wait_quiescent();
  return us;
}

double actor_rate(strata::mpi::session& mpi, const strata::actor_ref<echo_actor>& peer,
                  const strata::actor_ref<echo_actor>& mine, std::size_t items) {
  mpi.wait_quiescent();
  auto f0 = mine.ask(read_tally{});
  const auto before = mpi.get(f0);
  mpi.serialized([] { return MPI_Barrier(MPI_COMM_WORLD); });
  const auto t0 = clock_type::now();
  if (g_rank == 0) {
    for (std::size_t i = 0; i < items; ++i) peer.send(tally{i});
  }
  mpi.wait_quiescent();
  const double s = seconds_since(t0);
  auto f1 = mine.ask(read_tally{});
  const auto after = mpi.get(f1);
  if (g_rank == 1 && (after.first - before.first != items || after.second - before.second != items * (items - 1) / 2)) {
    wrong("actor rate count");
  }
  return static_cast<double>(items) / s / 1e6;
}

// --- rate -----------------------------------------------------------------------

double raw_rate(std::size_t items) {
  constexpr int window = 64;
  std::vector<std::uint64_t> buf(window);
  std::vector<MPI_Request> reqs(window);
  std::uint64_t sum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  for (std::size_t done = 0; done < items; done += window) {
    for (std::size_t k = 0; k < window; ++k) {
      if (g_rank == 0) {
        buf[k] = done + k;
        MPI_Isend(&buf[k], 8, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &reqs[k]);
      } else {
        MPI_Irecv(&buf[k], 8, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &reqs[k]);
      }
    }
    MPI_Waitall(window, reqs.data(), MPI_STATUSES_IGNORE);
    if (g_rank == 1) {
      for (auto v : buf) sum += v;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  const std::size_t n = (items + window - 1) / window * window;
  if (g_rank == 1 && sum != n * (n - 1) / 2) wrong("raw rate sum");
  return static_cast<double>(n) / s / 1e6;
}

double raw_coalesced_rate(std::size_t items) {
  constexpr std::size_t per = 64 * 1024 / 8;
  std::vector<std::uint64_t> buf(per);
  std::uint64_t sum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  for (std::size_t done = 0; done < items; done += per) {
    const std::size_t k = std::min(per, items - done);
    if (g_rank == 0) {
      for (std::size_t i = 0; i < k; ++i) buf[i] = done + i;
      MPI_Send(buf.data(), static_cast<int>(k * 8), MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    } else {
      MPI_Recv(buf.data(), static_cast<int>(k * 8), MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (std::size_t i = 0; i < k; ++i) sum += buf[i];
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (g_rank == 1 && sum != items * (items - 1) / 2) wrong("raw coalesced sum");
  return static_cast<double>(items) / s / 1e6;
}

double strata_rate(strata::mpi::session& mpi, std::size_t items) {
  mpi.wait_quiescent();
  const std::uint64_t count0 = g_count, sum0 = g_sum;
  mpi.serialized([] { return MPI_Barrier(MPI_COMM_WORLD); });
  const auto t0 = clock_type::now();
  if (g_rank == 0) {
    for (std::size_t i = 0; i < items; ++i) mpi.post_at(1, count, static_cast<std::uint64_t>(i));
  }
  mpi.wait_quiescent();
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (g_rank == 1 && (g_count - count0 != items || g_sum - sum0 != items * (items - 1) / 2)) wrong("strata rate count");
  return static_cast<double>(items) / s / 1e6;
}

// wait_quiescent right after one message from rank 0 to rank 1.
void quiescence(strata::mpi::session& mpi, int reps) {
  std::vector<double> us, waves;
  for (int r = 0; r < reps * 20; ++r) {
    mpi.wait_quiescent();
    const auto rounds0 = mpi.stats().termination_rounds;
    if (g_rank == 0) mpi.post_at(1, count, std::uint64_t{1});
    const auto t0 = clock_type::now();
    mpi.wait_quiescent();
    us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
    waves.push_back(static_cast<double>(mpi.stats().termination_rounds - rounds0));
  }
  report("quiescence", "strata", "1 msg", median(us), "us");
  report("quiescence", "strata", "waves", median(waves), "waves");
}

// A positive integer argument, or exit 2 naming the option.
std::size_t positive(const char* option, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v == 0 || text[0] == '-') {
    std::fprintf(stderr, "strata-bench-mpi: %s '%s' is invalid; accepted: a positive integer\n", option, text);
    std::exit(2);
  }
  return static_cast<std::size_t>(v);
}

void run_pairwise(strata::runtime& rt, strata::mpi::session& mpi, const options& o, const std::set<std::string>& only);

const char* const k_usage =
    "usage: mpirun -np 2 strata-bench-mpi [--reps N] [--items N] [--grid N] [--steps N] [--updates N]\n"
    "                                     [--only LIST] [--workers N|auto] [--json FILE]\n"
    "  --only     comma-separated parts: pingpong, rate, quiescence (these need exactly 2 ranks),\n"
    "             stencil, histogram (any number of ranks); default all\n"
    "  --workers  workers per rank: N, or auto (one per core the launcher gave the rank); default 1\n";

}  // namespace

int main(int argc, char** argv) {
  options o;
  std::set<std::string> only;
  std::string workers = "1";
  const std::set<std::string> parts{"pingpong", "rate", "quiescence", "stencil", "histogram"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--reps" && has_value) {
      o.reps = static_cast<int>(std::min<std::size_t>(positive("--reps", argv[++i]), 1000));
    } else if (a == "--items" && has_value) {
      o.rate_items = positive("--items", argv[++i]);
    } else if (a == "--grid" && has_value) {
      o.grid = positive("--grid", argv[++i]);
    } else if (a == "--steps" && has_value) {
      o.steps = static_cast<int>(std::min<std::size_t>(positive("--steps", argv[++i]), 1u << 20));
    } else if (a == "--updates" && has_value) {
      o.updates = positive("--updates", argv[++i]);
    } else if (a == "--only" && has_value) {
      std::string list = argv[++i];
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string part = list.substr(at, comma - at);
        if (parts.count(part) == 0) {
          std::fprintf(stderr, "strata-bench-mpi: --only: unknown part '%s'\n%s", part.c_str(), k_usage);
          return 2;
        }
        only.insert(part);
        at = comma + 1;
      }
    } else if (a == "--workers" && has_value) {
      workers = argv[++i];
      if (workers != "auto") workers = std::to_string(positive("--workers", workers.c_str()));
    } else if (a == "--json" && has_value) {
      o.json = argv[++i];
    } else if (a == "--help") {
      std::printf("%s", k_usage);
      return 0;
    } else {
      std::fprintf(stderr, "strata-bench-mpi: unknown argument '%s' (or a missing value)\n%s", a.c_str(), k_usage);
      return 2;
    }
  }
  if (only.empty()) only = parts;
  const auto wants = [&](const char* part) { return only.count(part) != 0; };
  const bool pairwise = wants("pingpong") || wants("rate") || wants("quiescence");
  // Default: one worker per rank, unbound (two ranks share this machine's
  // cores with their progress threads); auto: what the launcher gave.
  strata::config rc = strata::config::from_env();
  if (workers != "auto") {
    rc.workers = static_cast<unsigned>(std::stoul(workers));
    rc.oversubscribe = true;
    rc.bind = strata::bind_policy::none;
  }
  strata::runtime rt{rc};
  strata::mpi::config mc = strata::mpi::config::from_env();
  mc.init_level = strata::mpi::thread_level::multiple;
  strata::mpi::session mpi{argc, argv, rt, mc};
  g_rank = mpi.rank();
  g_size = mpi.size();
  if (pairwise && mpi.size() != 2) {
    if (g_rank == 0) {
      std::fprintf(stderr,
                   "strata-bench-mpi: pingpong, rate and quiescence run with exactly 2 ranks (mpirun -np 2); "
                   "this job has %d: use --only stencil,histogram\n",
                   mpi.size());
    }
    mpi.wait_quiescent();
    return 2;
  }
  if (g_rank == 0) {
    std::printf("strata-bench-mpi: %d ranks, %u workers each, %s, progress %s, medians of %d reps\n", mpi.size(),
                rt.num_workers(), mpi.stats().thread_level.c_str(), mpi.stats().progress.c_str(), o.reps);
    std::printf("%-11s %-15s %-10s %12s\n", "bench", "runtime", "param", "median");
  }
  if (pairwise) run_pairwise(rt, mpi, o, only);
  if (wants("stencil")) run_stencil(rt, mpi, o);
  if (wants("histogram")) run_histogram(rt, mpi, o);
  if (g_rank == 0 && !o.json.empty()) {
    std::ofstream out(o.json);
    for (const auto& r : g_results) {
      out << "{\"bench\":\"" << r.bench << "\",\"runtime\":\"" << r.runtime << "\",\"param\":\"" << r.param
          << "\",\"median\":" << r.value << ",\"unit\":\"" << r.unit << "\"}\n";
    }
  }
  mpi.wait_quiescent();
  return 0;
}

namespace {

// The measurements between the two ranks: pingpong, rate, quiescence.
void run_pairwise(strata::runtime& rt, strata::mpi::session& mpi, const options& o, const std::set<std::string>& only) {
  auto echo_here = rt.spawn_actor<echo_actor>();
  mpi.publish(echo_here, "echo");
  const auto echo_there = mpi.actor_at<echo_actor>(1 - g_rank, "echo");
  // Both lookups answered before either rank blocks in raw MPI calls (which
  // hold the bridge's MPI lock, so its progress waits for them).
  mpi.wait_quiescent();
  if (only.count("pingpong") != 0) {
    for (std::size_t bytes :
         {std::size_t{0}, std::size_t{8}, std::size_t{1024}, std::size_t{65536}, std::size_t{1} << 20}) {
      const int iters = bytes >= 65536 ? 200 : 2000;
      std::vector<double> raw, st, act;
      for (int r = 0; r < o.reps; ++r) {
        raw.push_back(mpi.serialized([&] { return raw_pingpong(bytes, iters); }));
        st.push_back(strata_pingpong(mpi, bytes, iters));
        act.push_back(actor_pingpong(mpi, echo_there, bytes, iters));
      }
      const std::string p = std::to_string(bytes) + " B";
      report("pingpong", "raw-mpi", p, median(raw), "us");
      report("pingpong", "strata", p, median(st), "us");
      report("pingpong", "strata-actor", p, median(act), "us");
    }
  }
  if (only.count("rate") != 0) {
    std::vector<double> raw, coal, st, act;
    for (int r = 0; r < o.reps; ++r) {
      raw.push_back(mpi.serialized([&] { return raw_rate(o.rate_items / 4); }));
      coal.push_back(mpi.serialized([&] { return raw_coalesced_rate(o.rate_items); }));
      st.push_back(strata_rate(mpi, o.rate_items));
      act.push_back(actor_rate(mpi, echo_there, echo_here, o.rate_items / 4));
    }
    report("rate", "raw-mpi-w64", "8 B", median(raw), "M msg/s");
    report("rate", "raw-coalesced", "8 B", median(coal), "M msg/s");
    report("rate", "strata", "8 B", median(st), "M msg/s");
    report("rate", "strata-actor", "8 B", median(act), "M msg/s");
  }
  if (only.count("quiescence") != 0) quiescence(mpi, o.reps);
}

}  // namespace
