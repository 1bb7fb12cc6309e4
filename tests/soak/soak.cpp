// soak: strata's mixed workload for a given time, every count reconciled,
// the process's memory, descriptors and threads sampled (issue 23 item 4).
//
//   mpirun -np 2 soak SECONDS      (tools/soak.sh runs it; jobs/soak.sbatch for hours)
//
// Each round, on every rank: a nested fork-join tree (task_group, checked
// against the serial answer), a parallel_reduce over first-touched data,
// actors taking messages (one of them migrated to the other worker every
// round; per-sender order checked), lock-mode transfers between accounts
// (the total is conserved), a dataflow chain (equal to the serial result),
// and remote tasks and posts to the other rank through the MPI bridge
// (results checked, hops counted), ended by wait_quiescent. After a
// warm-up (a fifth of the time, at least 2 s) the RSS, open descriptors and
// threads are the baseline; at the end descriptors and threads must equal
// it and the RSS stay within 2% + 4 MiB of it, and the RSS in small pages
// may grow at most 512 KiB over the second half of the time after warm-up
// (a steady leak shows as a slope; the soak once found one of ~100 bytes a
// round: a resource made per round and never released; sample::small_kib
// says why huge pages are left out of the slope). One line per sample and a verdict
// line; exit 0 when everything held.
#include <dirent.h>
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include <strata/mpi.hpp>
#include <strata/strata.hpp>

namespace {

strata::mpi::session* g_mpi = nullptr;
std::atomic<std::uint64_t> g_posts_received{0};
// Seconds spent per phase since the last report: a phase whose time per
// round grows while the others stay put is a leak of work (the soak found
// one: forwarding chains that grew a hop per migration).
constexpr const char* k_phases[] = {"tasks", "loops", "actors", "lock", "dataflow", "bridge"};
double g_phase[std::size(k_phases)] = {};

long square_plus(long x, long k) { return x * x + k; }
STRATA_MPI_REMOTE(square_plus);

void count_post(std::uint64_t) { g_posts_received.fetch_add(1, std::memory_order_relaxed); }
STRATA_MPI_REMOTE(count_post);

struct tick {
  std::uint32_t sender;
  std::uint64_t seq;
};
struct total {};

struct counter : strata::actor<counter> {
  std::uint64_t handled = 0, errors = 0;
  std::vector<std::uint64_t> next = std::vector<std::uint64_t>(4, 0);
  void receive(strata::actor_context&, const tick& t) {
    if (t.sender >= next.size() || t.seq != next[t.sender]) ++errors;
    if (t.sender < next.size()) next[t.sender] = t.seq + 1;
    ++handled;
  }
  std::uint64_t receive(strata::actor_context&, const total&) { return errors == 0 ? handled : ~0ull; }
};

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  strata::task_group g;
  g.run([&] { a = fib(n - 1); });
  b = fib(n - 2);
  g.wait();
  return a + b;
}

struct sample {
  long rss_kib = 0;
  long huge_kib = 0;  // of rss_kib, in transparent huge pages (read only where judged)
  int fds = 0, threads = 0;
  // The RSS in small pages. khugepaged collapses a touched part of a
  // MADV_HUGEPAGE arena chunk into one 2 MiB page whenever its scan comes
  // by (every 10 s by default): the RSS then steps up by the chunk's
  // untouched part once, which is no leak, while this figure goes down.
  long small_kib() const { return rss_kib - huge_kib; }
};

// AnonHugePages of /proc/self/smaps_rollup (0 where the kernel lacks it).
long anon_huge_kib() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  for (std::string line; std::getline(rollup, line);) {
    if (line.rfind("AnonHugePages:", 0) == 0) return std::atol(line.c_str() + 14);
  }
  return 0;
}

sample take_sample() {
  sample s;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) s.rss_kib = std::atol(line.c_str() + 6);
    if (line.rfind("Threads:", 0) == 0) s.threads = std::atoi(line.c_str() + 8);
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) s.fds += e->d_name[0] != '.';
    closedir(d);
    --s.fds;  // the directory's own descriptor
  }
  return s;
}

// One round; false (and a line on stderr) when a count did not reconcile.
bool round_once(strata::runtime& rt, strata::mpi::session& mpi, std::vector<strata::actor_ref<counter>>& actors,
                std::vector<std::uint64_t>& sent, std::vector<strata::resource>& accounts, std::vector<long>& balance,
                std::uint64_t round, std::uint64_t& migrations) {
  const int me = mpi.rank(), other = (mpi.rank() + 1) % mpi.size();
  bool ok = true;
  auto t0 = std::chrono::steady_clock::now();
  auto lap = [&](int k) {
    const auto now = std::chrono::steady_clock::now();
    g_phase[k] += std::chrono::duration<double>(now - t0).count();
    t0 = now;
  };
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "soak: rank %d round %llu: %s\n", me, static_cast<unsigned long long>(round), what);
    ok = false;
  };
  // Nested tasks.
  if (rt.submit([] { return fib(20); }).get() != 6765) fail("fib(20) != 6765");
  lap(0);
  // A reduction over first-touched data.
  std::vector<double> data(1 << 16);
  strata::parallel_for(rt, 0, data.size(), [&](std::size_t i) { data[i] = static_cast<double>(i % 7); });
  const double sum = strata::parallel_reduce(
      rt, 0, data.size(), 0.0,
      [&](std::size_t lo, std::size_t hi, double acc) { return std::accumulate(&data[lo], &data[hi], acc); },
      [](double a, double b) { return a + b; });
  if (sum != std::accumulate(data.begin(), data.end(), 0.0)) fail("parallel_reduce differs from the serial sum");
  lap(1);
  // Actors: 200 messages each, one migrated.
  for (std::size_t a = 0; a < actors.size(); ++a) {
    for (int i = 0; i < 200; ++i) actors[a].send(tick{0, sent[a]++});
  }
  // Each actor's turn comes every 4 rounds, and its target alternates, so a
  // move is refused only when the actor is in the middle of a turn.
  auto moved = rt.migrate_actor(actors[round % actors.size()],
                                strata::worker_id{static_cast<unsigned>(round / actors.size() % 2)});
  migrations += moved.get() ? 1 : 0;
  for (std::size_t a = 0; a < actors.size(); ++a) {
    if (actors[a].ask(total{}).get() != sent[a]) fail("an actor lost, reordered or duplicated a message");
  }
  lap(2);
  // Lock mode: 400 transfers of 1 between random accounts.
  for (int i = 0; i < 400; ++i) {
    const std::size_t from = (round * 7 + static_cast<std::size_t>(i) * 13) % accounts.size();
    const std::size_t to = (from + 1 + static_cast<std::size_t>(i) % (accounts.size() - 1)) % accounts.size();
    rt.spawn_with_access({strata::write(accounts[from]), strata::write(accounts[to])}, [&balance, from, to] {
      --balance[from];
      ++balance[to];
    });
  }
  rt.wait_idle();
  if (std::accumulate(balance.begin(), balance.end(), 0L) != 1000L * static_cast<long>(balance.size())) {
    fail("lock-mode transfers did not conserve the total");
  }
  lap(3);
  // Dataflow: x = 2x + i over a chain, twice interleaved with a reader.
  {
    strata::dataflow_graph g{rt};
    auto cell = rt.make_resource();
    long x = 1, serial = 1, seen = 0;
    for (int i = 0; i < 50; ++i) {
      g.task({strata::inout(cell)}, [&x, i] { x = 2 * x % 1000003 + i; });
      serial = 2 * serial % 1000003 + i;
    }
    g.task({strata::in(cell)}, [&] { seen = x; });
    g.wait();
    if (seen != serial) fail("the dataflow chain differs from serial execution");
    rt.release_resource(cell);  // a resource per round, as a program that makes them as it goes
  }
  lap(4);
  // The bridge: 50 remote tasks and 200 posts to the other rank.
  std::vector<strata::future<long>> results;
  for (long i = 0; i < 50; ++i) results.push_back(mpi.submit_at(other, square_plus, i, static_cast<long>(me)));
  for (int i = 0; i < 200; ++i) mpi.post_at(other, count_post, round);
  for (long i = 0; i < 50; ++i) {
    if (mpi.get(results[static_cast<std::size_t>(i)]) != i * i + me) fail("a remote task's result is wrong");
  }
  mpi.wait_quiescent();
  if (g_posts_received.load() != 200 * (round + 1)) fail("posts from the other rank were lost or duplicated");
  // Before the next round's posts: a rank that left wait_quiescent first
  // would otherwise post again while this one still counts.
  MPI_Barrier(MPI_COMM_WORLD);
  lap(5);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  if (argc > 1) {
    char* end = nullptr;
    seconds = std::strtod(argv[1], &end);
    if (end == argv[1] || *end != '\0' || !(seconds > 0) || seconds > 1e7) {
      std::fprintf(stderr, "soak: SECONDS must be a positive number of seconds (at most 1e7), got '%s'\n", argv[1]);
      return 2;
    }
  }
  if (!(seconds >= 1)) {
    std::fprintf(stderr, "usage: mpirun -np 2 soak SECONDS (at least 1)\n");
    return 2;
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rc = 0;
  {
    strata::config c = strata::config::from_env();
    c.workers = 2;
    c.oversubscribe = true;
    c.bind = strata::bind_policy::none;
    strata::runtime rt{c};
    strata::mpi::session mpi{rt, strata::mpi::config::from_env()};
    g_mpi = &mpi;
    std::vector<strata::actor_ref<counter>> actors;
    for (int i = 0; i < 4; ++i) actors.push_back(rt.spawn_actor<counter>());
    std::vector<std::uint64_t> sent(actors.size(), 0);
    std::vector<strata::resource> accounts;
    for (int i = 0; i < 16; ++i) accounts.push_back(rt.make_resource());
    std::vector<long> balance(accounts.size(), 1000);
    const auto start = std::chrono::steady_clock::now();
    const double warmup = std::max(2.0, seconds / 5);
    sample base, mid, last;
    bool have_base = false, have_mid = false, ok = true;
    std::uint64_t rounds = 0, migrations = 0;
    for (;;) {
      // Every rank runs the same number of rounds: rank 0 decides when to stop.
      int go = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds;
      MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
      if (!go) break;
      ok = round_once(rt, mpi, actors, sent, accounts, balance, rounds, migrations) && ok;
      ++rounds;
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      last = take_sample();
      if (!have_base && t >= warmup) {
        base = last;
        base.huge_kib = anon_huge_kib();
        have_base = true;
      }
      if (!have_mid && t >= warmup + (seconds - warmup) / 2) {
        mid = last;
        mid.huge_kib = anon_huge_kib();
        have_mid = true;
      }
      if (mpi.rank() == 0 && rounds % 50 == 0) {
        std::printf("soak: rank 0 t=%.0f s round %llu rss %ld KiB fds %d threads %d\n", t,
                    static_cast<unsigned long long>(rounds), last.rss_kib, last.fds, last.threads);
        std::printf("soak: ms per round:");
        for (std::size_t k = 0; k < std::size(k_phases); ++k) {
          std::printf(" %s %.2f", k_phases[k], g_phase[k] * 1000 / 50);
          g_phase[k] = 0;
        }
        std::printf("\n");
        std::fflush(stdout);
      }
    }
    last.huge_kib = anon_huge_kib();
    const bool flat = !have_base || (last.fds == base.fds && last.threads == base.threads &&
                                     last.rss_kib <= base.rss_kib + base.rss_kib / 50 + 4096 &&
                                     (!have_mid || last.small_kib() <= mid.small_kib() + 512));
    // Every actor had its turn to move at least once after a few rounds.
    if (rounds >= 2 * actors.size() && migrations == 0) {
      std::fprintf(stderr, "soak: rank %d: no actor migration succeeded in %llu rounds\n", mpi.rank(),
                   static_cast<unsigned long long>(rounds));
      ok = false;
    }
    std::printf("soak: rank %d: %llu rounds in %.0f s (%llu actor messages, %llu migrations, %llu remote tasks, "
                "%llu posts received), counts %s; after warm-up rss %ld -> %ld -> %ld KiB "
                "(in huge pages %ld -> %ld -> %ld), fds %d -> %d, threads %d -> %d: %s\n",
                mpi.rank(), static_cast<unsigned long long>(rounds), seconds,
                static_cast<unsigned long long>(std::accumulate(sent.begin(), sent.end(), std::uint64_t{0})),
                static_cast<unsigned long long>(migrations), static_cast<unsigned long long>(rounds * 50),
                static_cast<unsigned long long>(g_posts_received.load()), ok ? "reconciled" : "WRONG",
                base.rss_kib, have_mid ? mid.rss_kib : base.rss_kib, last.rss_kib, base.huge_kib,
                have_mid ? mid.huge_kib : base.huge_kib, last.huge_kib, base.fds, last.fds, base.threads, last.threads,
                flat ? "flat" : "GROWING");
    rc = ok && flat && have_base ? 0 : 1;
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rc = worst;
    mpi.wait_quiescent();
    g_mpi = nullptr;
  }
  MPI_Finalize();
  return rc;
}
