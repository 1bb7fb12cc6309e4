// strata-bench-mpi: the bridge against raw MPI, side by side in one run,
// under mpirun with 2 ranks (run.sh does it). Every figure is a median
// over --reps repetitions; every result is checked (echoed bytes, counts,
// sums), and a wrong one fails the run.
//
//   pingpong  round trip of an N-byte payload, 0 B .. 1 MiB:
//             raw      MPI_Send / MPI_Recv
//             strata   submit_at(peer, echo, bytes).get() (the remote
//                      function runs inline on the peer's progress thread)
//   rate      8-byte messages from rank 0 to rank 1:
//             raw      MPI_Isend windows of 64, one MPI_Waitall per window
//             raw-coalesced  the ceiling: items packed by hand into 64 KiB
//                      buffers, one MPI_Send each
//             strata   post_at(1, count, value) per item (coalesced by the
//                      bridge), then wait_quiescent
//   quiescence  wait_quiescent right after one message: the time and the
//             waves it took
//
// Output: one line per measurement, then a JSON object per line with
// --json FILE.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <strata/mpi.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

std::vector<std::uint8_t> echo(std::vector<std::uint8_t> v) { return v; }
STRATA_MPI_REMOTE_INLINE(echo);

std::uint64_t g_count = 0, g_sum = 0;  // the owner thread only (inline)
void count(std::uint64_t v) {
  ++g_count;
  g_sum += v;
}
STRATA_MPI_REMOTE_INLINE(count);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct options {
  int reps = 5;
  std::size_t rate_items = 2'000'000;
  std::string json;
};

struct result {
  std::string bench, runtime, param, unit;
  double value = 0;
};

std::vector<result> g_results;
int g_rank = 0;

void report(const std::string& bench, const std::string& runtime, const std::string& param, double value,
            const std::string& unit) {
  g_results.push_back({bench, runtime, param, unit, value});
  if (g_rank == 0) {
    std::printf("%-11s %-15s %-10s %12.3f %s\n", bench.c_str(), runtime.c_str(), param.c_str(), value, unit.c_str());
  }
  std::fflush(stdout);
}

[[noreturn]] void wrong(const std::string& what) {
  std::fprintf(stderr, "strata-bench-mpi: rank %d: WRONG RESULT: %s\n", g_rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}

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

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      o.reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--items" && i + 1 < argc) {
      o.rate_items = static_cast<std::size_t>(std::atoll(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      o.json = argv[++i];
    } else if (a == "--help") {
      std::printf("usage: mpirun -np 2 strata-bench-mpi [--reps N] [--items N] [--json FILE]\n");
      return 0;
    } else {
      std::fprintf(stderr, "strata-bench-mpi: unknown argument '%s'; accepted: --reps N, --items N, --json FILE\n",
                   a.c_str());
      return 2;
    }
  }
  strata::config rc;
  rc.workers = 1;
  rc.oversubscribe = true;
  rc.bind = strata::bind_policy::none;
  strata::runtime rt{rc};
  strata::mpi::config mc = strata::mpi::config::from_env();
  mc.init_level = strata::mpi::thread_level::multiple;
  strata::mpi::session mpi{argc, argv, rt, mc};
  g_rank = mpi.rank();
  if (mpi.size() != 2) {
    if (g_rank == 0) std::fprintf(stderr, "strata-bench-mpi: run it with 2 ranks (mpirun -np 2)\n");
    return 2;
  }
  if (g_rank == 0) {
    std::printf("strata-bench-mpi: 2 ranks, %s, progress %s, medians of %d reps\n", mpi.stats().thread_level.c_str(),
                mpi.stats().progress.c_str(), o.reps);
    std::printf("%-11s %-15s %-10s %12s\n", "bench", "runtime", "param", "median");
  }
  for (std::size_t bytes :
       {std::size_t{0}, std::size_t{8}, std::size_t{1024}, std::size_t{65536}, std::size_t{1} << 20}) {
    const int iters = bytes >= 65536 ? 200 : 2000;
    std::vector<double> raw, st;
    for (int r = 0; r < o.reps; ++r) {
      raw.push_back(mpi.serialized([&] { return raw_pingpong(bytes, iters); }));
      st.push_back(strata_pingpong(mpi, bytes, iters));
    }
    const std::string p = std::to_string(bytes) + " B";
    report("pingpong", "raw-mpi", p, median(raw), "us");
    report("pingpong", "strata", p, median(st), "us");
  }
  {
    std::vector<double> raw, coal, st;
    for (int r = 0; r < o.reps; ++r) {
      raw.push_back(mpi.serialized([&] { return raw_rate(o.rate_items / 4); }));
      coal.push_back(mpi.serialized([&] { return raw_coalesced_rate(o.rate_items); }));
      st.push_back(strata_rate(mpi, o.rate_items));
    }
    report("rate", "raw-mpi-w64", "8 B", median(raw), "M msg/s");
    report("rate", "raw-coalesced", "8 B", median(coal), "M msg/s");
    report("rate", "strata", "8 B", median(st), "M msg/s");
  }
  quiescence(mpi, o.reps);
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
