// The distributed workloads of strata-bench-mpi, each against the way an
// MPI code writes it today, with the same decomposition, in one run.
//
//   stencil    2-D heat (5-point Jacobi) on an N x N grid split in row
//              blocks over the ranks, a halo row exchanged with each
//              neighbour per step:
//              mpi+omp  MPI_Sendrecv of the halos, then an OpenMP
//                       `parallel for schedule(static)` over the rows
//              strata   the halos posted through the bridge (an inline
//                       handler stores them, double-buffered by step
//                       parity), then parallel_for(numa_static) over the
//                       rows; the grid first touched by the same partition
//              Checked: every rank's grid sums to the same bits in both.
//   histogram  10^7 random 8-byte updates over all ranks to bins spread
//              over the ranks (YGM's example):
//              alltoallv  bucket by rank, MPI_Alltoall of the counts,
//                         MPI_Alltoallv of the updates, apply
//              strata     post_at(owner, bump, bin) per update (coalesced,
//                         an inline handler applies it), wait_quiescent
//              strata-task  the same loop inside rt.submit(...).get()
//              strata-actor  send(bump{bin}) to the owner rank's histogram
//                         actor per update, wait_quiescent
//              Checked: the bins' total equals the updates and the bins
//              match the Alltoallv version's bin by bin.
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <strata/mpi.hpp>
#include <strata/runtime/parallel.hpp>

#include "common.hpp"

namespace strata_bench_mpi {

namespace {

// ---- stencil -----------------------------------------------------------------

struct grid {
  std::size_t rows = 0, cols = 0;  // interior rows of this rank; columns
  std::unique_ptr<double[]> a, b;  // (rows + 2) x cols: row 0 and rows + 1 are ghosts
  double* row(double* g, std::size_t i) const { return g + i * cols; }
};

// The value a cell starts with (interior) and the fixed boundaries: a hot
// top edge, cold elsewhere.
double initial(std::size_t global_row, std::size_t col) {
  return static_cast<double>((global_row * 7 + col * 13) % 17) / 17.0;
}

void init_rows(grid& g, std::size_t lo, std::size_t hi, std::size_t first_global) {
  for (std::size_t i = lo; i < hi; ++i) {
    double* ra = g.row(g.a.get(), i);
    double* rb = g.row(g.b.get(), i);
    for (std::size_t j = 0; j < g.cols; ++j) {
      double v = 0;
      if (i == 0) {
        v = g_rank == 0 ? 1.0 : 0.0;  // rank 0's top ghost is the hot edge; others are halos
      } else if (i == g.rows + 1) {
        v = 0.0;
      } else if (j != 0 && j + 1 != g.cols) {
        v = initial(first_global + i - 1, j);
      }
      ra[j] = v;
      rb[j] = v;
    }
  }
}

inline void relax_rows(const grid& g, const double* a, double* b, std::size_t lo, std::size_t hi) {
  const std::size_t n = g.cols;
  for (std::size_t i = lo; i < hi; ++i) {
    const double* up = a + (i - 1) * n;
    const double* mid = a + i * n;
    const double* down = a + (i + 1) * n;
    double* out = b + i * n;
    out[0] = mid[0];
    for (std::size_t j = 1; j + 1 < n; ++j) out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
    out[n - 1] = mid[n - 1];
  }
}

double interior_sum(const grid& g, const double* a) {
  double s = 0;
  for (std::size_t i = 1; i <= g.rows; ++i) {
    for (std::size_t j = 0; j < g.cols; ++j) s += a[i * g.cols + j];
  }
  return s;
}

grid make_grid(const options& o) {
  grid g;
  g.cols = o.grid;
  g.rows = o.grid / static_cast<std::size_t>(g_size);
  g.a.reset(new double[(g.rows + 2) * g.cols]);  // uninitialised: first touched by the workers
  g.b.reset(new double[(g.rows + 2) * g.cols]);
  return g;
}

int up_rank() { return g_rank == 0 ? MPI_PROC_NULL : g_rank - 1; }
int down_rank() { return g_rank + 1 == g_size ? MPI_PROC_NULL : g_rank + 1; }

double stencil_mpi_omp(const options& o, int threads, double& sum) {
  grid g = make_grid(o);
  const std::size_t first = static_cast<std::size_t>(g_rank) * g.rows;
  omp_set_num_threads(threads);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < g.rows + 2; ++i) init_rows(g, i, i + 1, first);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  double* a = g.a.get();
  double* b = g.b.get();
  const int n = static_cast<int>(g.cols);
  for (int s = 0; s < o.steps; ++s) {
    MPI_Sendrecv(g.row(a, 1), n, MPI_DOUBLE, up_rank(), 11, g.row(a, g.rows + 1), n, MPI_DOUBLE, down_rank(), 11,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(g.row(a, g.rows), n, MPI_DOUBLE, down_rank(), 12, g.row(a, 0), n, MPI_DOUBLE, up_rank(), 12,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 1; i <= g.rows; ++i) relax_rows(g, a, b, i, i + 1);
    std::swap(a, b);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double secs = seconds_since(t0);
  sum = interior_sum(g, a);
  return secs;
}

// The strata version's halos: stored by an inline handler on the MPI owner,
// by step parity (a neighbour is at most one step ahead: it cannot send
// step s + 2 before it has this rank's halo of step s + 1).
struct halos {
  std::vector<double> from_up[2], from_down[2];
  // How many halos arrived from each side. release by the handler, acquire
  // by the compute thread that waits for them.
  std::atomic<std::uint64_t> got_up{0}, got_down{0};
};
halos* g_halos = nullptr;

// side 0: the sender is above this rank (its bottom row), 1: below.
void halo_in(std::uint32_t side, std::uint32_t step, std::vector<double> row) {
  halos& h = *g_halos;
  if (side == 0) {
    h.from_up[step % 2] = std::move(row);
    h.got_up.fetch_add(1, std::memory_order_release);
  } else {
    h.from_down[step % 2] = std::move(row);
    h.got_down.fetch_add(1, std::memory_order_release);
  }
}
STRATA_MPI_REMOTE_INLINE(halo_in);

double stencil_strata(strata::runtime& rt, strata::mpi::session& mpi, const options& o, double& sum) {
  grid g = make_grid(o);
  const std::size_t first = static_cast<std::size_t>(g_rank) * g.rows;
  const std::size_t grain = std::max<std::size_t>(1, g.rows / (4 * rt.num_workers()));
  strata::parallel_for(
      rt, 0, g.rows + 2, grain, [&](std::size_t lo, std::size_t hi) { init_rows(g, lo, hi, first); },
      strata::partition::numa_static);
  halos h;
  g_halos = &h;
  mpi.wait_quiescent();
  const auto t0 = clock_type::now();
  double* a = g.a.get();
  double* b = g.b.get();
  const auto wait_for = [&](std::atomic<std::uint64_t>& got, std::uint64_t want) {
    while (got.load(std::memory_order_acquire) < want) {
      if (mpi.progress() == 0) std::this_thread::yield();
    }
  };
  for (int s = 0; s < o.steps; ++s) {
    const auto step = static_cast<std::uint32_t>(s);
    const double* top = g.row(a, 1);
    const double* bottom = g.row(a, g.rows);
    if (up_rank() != MPI_PROC_NULL) mpi.post_at(up_rank(), halo_in, 1u, step, std::vector<double>(top, top + g.cols));
    if (down_rank() != MPI_PROC_NULL) {
      mpi.post_at(down_rank(), halo_in, 0u, step, std::vector<double>(bottom, bottom + g.cols));
    }
    mpi.flush();  // the halos leave now: this rank waits for its neighbours' next
    if (up_rank() != MPI_PROC_NULL) {
      wait_for(h.got_up, step + 1);
      std::memcpy(g.row(a, 0), h.from_up[s % 2].data(), g.cols * sizeof(double));
    }
    if (down_rank() != MPI_PROC_NULL) {
      wait_for(h.got_down, step + 1);
      std::memcpy(g.row(a, g.rows + 1), h.from_down[s % 2].data(), g.cols * sizeof(double));
    }
    strata::parallel_for(
        rt, 1, g.rows + 1, grain, [&, a, b](std::size_t lo, std::size_t hi) { relax_rows(g, a, b, lo, hi); },
        strata::partition::numa_static);
    std::swap(a, b);
  }
  mpi.wait_quiescent();
  const double secs = seconds_since(t0);
  sum = interior_sum(g, a);
  g_halos = nullptr;
  return secs;
}

// ---- histogram -------------------------------------------------------------------

constexpr std::uint64_t k_bins_per_rank = 1u << 20;
std::vector<std::uint64_t>* g_bins = nullptr;  // this rank's bins

// An inline handler: a rank's run one at a time (in its MPI owner's passes,
// this rank's own updates among them), so the bin is a plain increment, as
// the Alltoallv version's and a YGM user's.
void bump(std::uint32_t bin) { (*g_bins)[bin]++; }
STRATA_MPI_REMOTE_INLINE(bump);

struct bump_msg {
  std::uint32_t bin;
};
struct histogram_actor : strata::actor<histogram_actor> {
  std::vector<std::uint64_t> bins = std::vector<std::uint64_t>(k_bins_per_rank, 0);
  void receive(strata::actor_context&, const bump_msg& m) { bins[m.bin]++; }
  std::vector<std::uint64_t> receive(strata::actor_context&, const std::vector<std::uint64_t>&) { return bins; }
};

// This rank's updates: (owner rank, bin there), the same in every version.
std::vector<std::uint64_t> make_updates(std::size_t n) {
  std::mt19937_64 rng(1234567 + static_cast<std::uint64_t>(g_rank));
  std::vector<std::uint64_t> u(n);
  const std::uint64_t total_bins = k_bins_per_rank * static_cast<std::uint64_t>(g_size);
  for (auto& x : u) x = rng() % total_bins;
  return u;
}

double histogram_alltoallv(const std::vector<std::uint64_t>& updates, std::vector<std::uint64_t>& bins) {
  bins.assign(k_bins_per_rank, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = clock_type::now();
  const auto p = static_cast<std::size_t>(g_size);
  std::vector<int> send_counts(p, 0), recv_counts(p), send_offs(p), recv_offs(p);
  for (std::uint64_t u : updates) send_counts[u / k_bins_per_rank]++;
  for (std::size_t r = 0, at = 0; r < p; ++r) {
    send_offs[r] = static_cast<int>(at);
    at += static_cast<std::size_t>(send_counts[r]);
  }
  std::vector<std::uint32_t> out(updates.size());
  std::vector<int> fill = send_offs;
  for (std::uint64_t u : updates) {
    out[static_cast<std::size_t>(fill[u / k_bins_per_rank]++)] = static_cast<std::uint32_t>(u % k_bins_per_rank);
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::size_t total = 0;
  for (std::size_t r = 0; r < p; ++r) {
    recv_offs[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(recv_counts[r]);
  }
  std::vector<std::uint32_t> in(total);
  MPI_Alltoallv(out.data(), send_counts.data(), send_offs.data(), MPI_UINT32_T, in.data(), recv_counts.data(),
                recv_offs.data(), MPI_UINT32_T, MPI_COMM_WORLD);
  for (std::uint32_t b : in) bins[b]++;
  MPI_Barrier(MPI_COMM_WORLD);
  return seconds_since(t0);
}

double histogram_strata(strata::mpi::session& mpi, const std::vector<std::uint64_t>& updates,
                        std::vector<std::uint64_t>& bins) {
  bins.assign(k_bins_per_rank, 0);
  g_bins = &bins;
  mpi.wait_quiescent();
  const auto t0 = clock_type::now();
  for (std::uint64_t u : updates) {
    mpi.post_at(static_cast<int>(u / k_bins_per_rank), bump, static_cast<std::uint32_t>(u % k_bins_per_rank));
  }
  mpi.wait_quiescent();
  const double secs = seconds_since(t0);
  g_bins = nullptr;
  return secs;
}

// The same loop as a task on the runtime (the way a strata program runs its
// work): with one worker per rank under progress=worker, that worker is the
// comm worker, so each rank runs one busy thread, as the Alltoallv version
// does; its posts make the passes that receive the other rank's updates.
double histogram_strata_task(strata::runtime& rt, strata::mpi::session& mpi,
                             const std::vector<std::uint64_t>& updates, std::vector<std::uint64_t>& bins) {
  bins.assign(k_bins_per_rank, 0);
  g_bins = &bins;
  mpi.wait_quiescent();
  const auto t0 = clock_type::now();
  rt.submit([&] {
      for (std::uint64_t u : updates) {
        mpi.post_at(static_cast<int>(u / k_bins_per_rank), bump, static_cast<std::uint32_t>(u % k_bins_per_rank));
      }
    }).get();
  mpi.wait_quiescent();
  const double secs = seconds_since(t0);
  g_bins = nullptr;
  return secs;
}

double histogram_actors(strata::runtime& rt, strata::mpi::session& mpi, const std::vector<std::uint64_t>& updates,
                        std::vector<std::uint64_t>& bins, int rep) {
  auto mine = rt.spawn_actor<histogram_actor>();
  const std::string name = "histogram-" + std::to_string(rep);
  mpi.publish(mine, name);
  std::vector<strata::actor_ref<histogram_actor>> owners;
  for (int r = 0; r < g_size; ++r) owners.push_back(mpi.actor_at<histogram_actor>(r, name));
  mpi.wait_quiescent();
  const auto t0 = clock_type::now();
  for (std::uint64_t u : updates) {
    owners[u / k_bins_per_rank].send(bump_msg{static_cast<std::uint32_t>(u % k_bins_per_rank)});
  }
  mpi.wait_quiescent();
  const double secs = seconds_since(t0);
  auto f = mine.ask(std::vector<std::uint64_t>{});
  bins = mpi.get(f);
  return secs;
}

void check_bins(const std::vector<std::uint64_t>& want, const std::vector<std::uint64_t>& got, const char* who,
                std::uint64_t expected_total) {
  std::uint64_t total = 0, all = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) wrong(std::string(who) + ": bin " + std::to_string(i) + " differs from Alltoallv's");
    total += got[i];
  }
  MPI_Allreduce(&total, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (all != expected_total) wrong(std::string(who) + ": the bins hold " + std::to_string(all) + " updates");
}

}  // namespace

void run_stencil(strata::runtime& rt, strata::mpi::session& mpi, const options& o) {
  if (o.grid % static_cast<std::size_t>(g_size) != 0 || o.grid < 8) wrong("--grid must be a multiple of the ranks");
  std::vector<double> omp_s, st_s;
  const int threads = static_cast<int>(rt.num_workers());
  for (int r = 0; r < o.reps; ++r) {
    double sum_omp = 0, sum_st = 0;
    omp_s.push_back(mpi.serialized([&] { return stencil_mpi_omp(o, threads, sum_omp); }));
    st_s.push_back(stencil_strata(rt, mpi, o, sum_st));
    if (std::memcmp(&sum_omp, &sum_st, sizeof(double)) != 0) {
      wrong("stencil: grid sums differ (" + std::to_string(sum_omp) + " vs " + std::to_string(sum_st) + ")");
    }
  }
  const double cells = static_cast<double>(o.grid) * static_cast<double>(o.grid) * o.steps;
  const std::string p = std::to_string(o.grid) + "^2";
  report("stencil", "mpi+omp", p, cells / median(omp_s) / 1e6, "MLUP/s");
  report("stencil", "strata", p, cells / median(st_s) / 1e6, "MLUP/s");
}

void run_histogram(strata::runtime& rt, strata::mpi::session& mpi, const options& o) {
  const std::size_t mine = o.updates / static_cast<std::size_t>(g_size);
  const std::uint64_t total = static_cast<std::uint64_t>(mine) * static_cast<std::uint64_t>(g_size);
  const std::vector<std::uint64_t> updates = make_updates(mine);
  std::vector<double> a2a, st, task, act;
  std::vector<std::uint64_t> want, got;
  for (int r = 0; r < o.reps; ++r) {
    a2a.push_back(mpi.serialized([&] { return histogram_alltoallv(updates, want); }));
    mpi.serialized([&] { check_bins(want, want, "alltoallv", total); });
    st.push_back(histogram_strata(mpi, updates, got));
    mpi.serialized([&] { check_bins(want, got, "strata", total); });
    task.push_back(histogram_strata_task(rt, mpi, updates, got));
    mpi.serialized([&] { check_bins(want, got, "strata-task", total); });
    act.push_back(histogram_actors(rt, mpi, updates, got, r));
    mpi.serialized([&] { check_bins(want, got, "strata-actor", total); });
  }
  const std::string p = std::to_string(total / 1'000'000) + "M";
  report("histogram", "alltoallv", p, static_cast<double>(total) / median(a2a) / 1e6, "M upd/s");
  report("histogram", "strata", p, static_cast<double>(total) / median(st) / 1e6, "M upd/s");
  report("histogram", "strata-task", p, static_cast<double>(total) / median(task) / 1e6, "M upd/s");
  report("histogram", "strata-actor", p, static_cast<double>(total) / median(act) / 1e6, "M upd/s");
}

}  // namespace strata_bench_mpi
