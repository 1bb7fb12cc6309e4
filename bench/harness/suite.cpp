// The benchmark list. Which versions exist depends on what the build found:
// STRATA_BENCH_HAVE_TBB, STRATA_BENCH_HAVE_OPENMP, STRATA_BENCH_HAVE_RUNTIME
// (the strata::runtime target) and STRATA_BENCH_HAVE_CAF. The omp-llvm helper
// is this same harness built by clang++ with STRATA_BENCH_LLVM_HELPER: there
// the OpenMP versions fill the omp-llvm slot and nothing else is run.
#include "harness/suite.hpp"

#include "bank/bank.hpp"
#include "cholesky/cholesky.hpp"
#include "counting/counting.hpp"
#include "fib/fib.hpp"
#include "forkjoin/forkjoin.hpp"
#include "jacobi/jacobi.hpp"
#include "nqueens/nqueens.hpp"
#include "pingpong/pingpong.hpp"
#include "reduce/reduce.hpp"
#include "skynet/skynet.hpp"
#include "spawn/spawn.hpp"
#include "stream/stream.hpp"
#include "threadring/threadring.hpp"
#include "uts/uts.hpp"

// A version's prepare function where it is compiled in, else nullptr.
#if defined(STRATA_BENCH_HAVE_TBB) && !defined(STRATA_BENCH_LLVM_HELPER)
#define STRATA_BENCH_TBB(...) __VA_ARGS__
#else
#define STRATA_BENCH_TBB(...) nullptr
#endif
#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
#define STRATA_BENCH_STRATA(...) __VA_ARGS__
#else
#define STRATA_BENCH_STRATA(...) nullptr
#endif
#if defined(STRATA_BENCH_HAVE_OPENMP)
#define STRATA_BENCH_OMP(...) __VA_ARGS__
#else
#define STRATA_BENCH_OMP(...) nullptr
#endif
#if defined(STRATA_BENCH_HAVE_CAF) && !defined(STRATA_BENCH_LLVM_HELPER)
#define STRATA_BENCH_CAF(...) __VA_ARGS__
#else
#define STRATA_BENCH_CAF(...) nullptr
#endif

namespace strata_bench {
namespace {

// The OpenMP versions fill the slot of the OpenMP runtime this binary links.
#if defined(STRATA_BENCH_LLVM_HELPER)
constexpr runtime_id k_openmp_slot = runtime_id::omp_llvm;
#else
constexpr runtime_id k_openmp_slot = runtime_id::omp;
#endif

constexpr std::array<prepare_fn, k_runtime_count> versions(prepare_fn serial, prepare_fn strata,
                                                           prepare_fn tbb, prepare_fn openmp) {
  std::array<prepare_fn, k_runtime_count> v{};
  v[static_cast<std::size_t>(runtime_id::serial)] = serial;
  v[static_cast<std::size_t>(runtime_id::strata)] = strata;
  v[static_cast<std::size_t>(runtime_id::tbb)] = tbb;
  v[static_cast<std::size_t>(k_openmp_slot)] = openmp;
  return v;
}

// The actor benchmarks: serial, strata and the C++ Actor Framework.
constexpr std::array<prepare_fn, k_runtime_count> actor_versions(prepare_fn serial, prepare_fn strata, prepare_fn caf) {
  std::array<prepare_fn, k_runtime_count> v{};
  v[static_cast<std::size_t>(runtime_id::serial)] = serial;
  v[static_cast<std::size_t>(runtime_id::strata)] = strata;
  v[static_cast<std::size_t>(runtime_id::caf)] = caf;
  return v;
}

// fib: strata once per fork-join API.
const std::array<variant, 2> k_fib_strata{{
    {runtime_id::strata, "api=task_group", STRATA_BENCH_STRATA(fib::prepare_strata)},
    {runtime_id::strata, "api=parallel_invoke", STRATA_BENCH_STRATA(fib::prepare_strata_invoke)},
}};

// skynet: strata once per fork-join API.
const std::array<variant, 2> k_skynet_strata{{
    {runtime_id::strata, "api=task_group", STRATA_BENCH_STRATA(skynet::prepare_strata)},
    {runtime_id::strata, "api=parallel_invoke", STRATA_BENCH_STRATA(skynet::prepare_strata_invoke)},
}};

// spawn: strata once per producer (the harness thread, a task on a worker).
const std::array<variant, 2> k_spawn_strata{{
    {runtime_id::strata, "producer=main", STRATA_BENCH_STRATA(spawn::prepare_strata_main)},
    {runtime_id::strata, "producer=worker", STRATA_BENCH_STRATA(spawn::prepare_strata_worker)},
}};

// pingpong: strata once with both actors on one worker, once on two.
const std::array<variant, 2> k_pingpong_strata{{
    {runtime_id::strata, "actors=same-worker", STRATA_BENCH_STRATA(pingpong::prepare_strata_same_worker)},
    {runtime_id::strata, "actors=cross-worker", STRATA_BENCH_STRATA(pingpong::prepare_strata_cross_worker), 2},
}};

// threadring: strata with the ring on one worker, and spread over all.
const std::array<variant, 2> k_threadring_strata{{
    {runtime_id::strata, "actors=same-worker", STRATA_BENCH_STRATA(threadring::prepare_strata_same_worker)},
    {runtime_id::strata, "actors=spread", STRATA_BENCH_STRATA(threadring::prepare_strata_spread), 2},
}};

// stream: every version is a variant, so every record names its placement;
// strata has one per placement.
template <stream::placement where>
repetition prepare_stream_strata(unsigned threads) {
  return stream::prepare_strata(where, threads);
}
const std::array<variant, 7> k_stream_versions{{
    {runtime_id::serial, "placement=serial-init", stream::prepare_serial},
    {runtime_id::strata, "placement=serial-init",
     STRATA_BENCH_STRATA(prepare_stream_strata<stream::placement::serial_init>)},
    {runtime_id::strata, "placement=interleaved",
     STRATA_BENCH_STRATA(prepare_stream_strata<stream::placement::interleaved>)},
    {runtime_id::strata, "placement=first-touch",
     STRATA_BENCH_STRATA(prepare_stream_strata<stream::placement::first_touch>)},
    {runtime_id::strata, "placement=per-node",
     STRATA_BENCH_STRATA(prepare_stream_strata<stream::placement::per_node>)},
    {runtime_id::tbb, "placement=first-touch", STRATA_BENCH_TBB(stream::prepare_tbb)},
    {k_openmp_slot, "placement=first-touch", STRATA_BENCH_OMP(stream::prepare_omp)},
}};

// bank: every version is a variant, one per transfer distribution.
template <repetition (*prepare)(bank::distribution, unsigned), bank::distribution d>
repetition per_distribution(unsigned threads) {
  return prepare(d, threads);
}
constexpr auto k_uniform = bank::distribution::uniform;
constexpr auto k_zipf = bank::distribution::zipf;
// A task per transfer: strata with its producer on a worker and on the main
// (harness) thread, oneTBB's task_group from its arena's master thread,
// OpenMP's single producer; oneTBB's parallel_for (no task per transfer) is
// shown beside them.
const std::array<variant, 12> k_bank_versions{{
    {runtime_id::serial, "dist=uniform", per_distribution<bank::prepare_serial, k_uniform>},
    {runtime_id::serial, "dist=zipf-0.99", per_distribution<bank::prepare_serial, k_zipf>},
    {runtime_id::strata, "dist=uniform", STRATA_BENCH_STRATA(per_distribution<bank::prepare_strata, k_uniform>)},
    {runtime_id::strata, "dist=zipf-0.99", STRATA_BENCH_STRATA(per_distribution<bank::prepare_strata, k_zipf>)},
    {runtime_id::strata, "dist=uniform producer=main",
     STRATA_BENCH_STRATA(per_distribution<bank::prepare_strata_main, k_uniform>)},
    {runtime_id::strata, "dist=zipf-0.99 producer=main",
     STRATA_BENCH_STRATA(per_distribution<bank::prepare_strata_main, k_zipf>)},
    {k_openmp_slot, "dist=uniform api=tasks", STRATA_BENCH_OMP(per_distribution<bank::prepare_omp_tasks, k_uniform>)},
    {k_openmp_slot, "dist=zipf-0.99 api=tasks", STRATA_BENCH_OMP(per_distribution<bank::prepare_omp_tasks, k_zipf>)},
    {runtime_id::tbb, "dist=uniform api=tasks",
     STRATA_BENCH_TBB(per_distribution<bank::prepare_tbb_tasks, k_uniform>)},
    {runtime_id::tbb, "dist=zipf-0.99 api=tasks",
     STRATA_BENCH_TBB(per_distribution<bank::prepare_tbb_tasks, k_zipf>)},
    {runtime_id::tbb, "dist=uniform api=parallel_for",
     STRATA_BENCH_TBB(per_distribution<bank::prepare_tbb, k_uniform>)},
    {runtime_id::tbb, "dist=zipf-0.99 api=parallel_for",
     STRATA_BENCH_TBB(per_distribution<bank::prepare_tbb, k_zipf>)},
}};
constexpr runtime_set k_bank_runtimes{runtime_id::serial, runtime_id::strata, runtime_id::tbb, runtime_id::omp,
                                      runtime_id::omp_llvm};

// cholesky: every version is a variant, one per tiling.
template <const cholesky::shape& s>
repetition prepare_cholesky_serial(unsigned threads) {
  return cholesky::prepare_serial(s, threads);
}
template <const cholesky::shape& s>
repetition prepare_cholesky_strata(unsigned threads) {
  return cholesky::prepare_strata(s, threads);
}
template <const cholesky::shape& s>
repetition prepare_cholesky_strata_main(unsigned threads) {
  return cholesky::prepare_strata_main(s, threads);
}
template <const cholesky::shape& s>
repetition prepare_cholesky_tbb(unsigned threads) {
  return cholesky::prepare_tbb(s, threads);
}
template <const cholesky::shape& s>
repetition prepare_cholesky_omp(unsigned threads) {
  return cholesky::prepare_omp(s, threads);
}
constexpr std::string_view k_coarse_params = "tiles=12x12 b=96 n=1152";
constexpr std::string_view k_fine_params = "tiles=24x24 b=32 n=768";
constexpr std::string_view k_coarse_main = "tiles=12x12 b=96 n=1152 producer=main";
constexpr std::string_view k_fine_main = "tiles=24x24 b=32 n=768 producer=main";
const std::array<variant, 10> k_cholesky_versions{{
    {runtime_id::serial, k_coarse_params, prepare_cholesky_serial<cholesky::k_coarse>},
    {runtime_id::serial, k_fine_params, prepare_cholesky_serial<cholesky::k_fine>},
    {runtime_id::strata, k_coarse_params, STRATA_BENCH_STRATA(prepare_cholesky_strata<cholesky::k_coarse>)},
    {runtime_id::strata, k_fine_params, STRATA_BENCH_STRATA(prepare_cholesky_strata<cholesky::k_fine>)},
    {runtime_id::strata, k_coarse_main, STRATA_BENCH_STRATA(prepare_cholesky_strata_main<cholesky::k_coarse>)},
    {runtime_id::strata, k_fine_main, STRATA_BENCH_STRATA(prepare_cholesky_strata_main<cholesky::k_fine>)},
    {runtime_id::tbb, k_coarse_params, STRATA_BENCH_TBB(prepare_cholesky_tbb<cholesky::k_coarse>)},
    {runtime_id::tbb, k_fine_params, STRATA_BENCH_TBB(prepare_cholesky_tbb<cholesky::k_fine>)},
    {k_openmp_slot, k_coarse_params, STRATA_BENCH_OMP(prepare_cholesky_omp<cholesky::k_coarse>)},
    {k_openmp_slot, k_fine_params, STRATA_BENCH_OMP(prepare_cholesky_omp<cholesky::k_fine>)},
}};

const std::array<benchmark, 15> k_suite{{
    {"fib", "n=30", "fib(30) without cutoff: a task per call, 2.69 M tasks (spawn/join cost)",
     versions(fib::prepare_serial, nullptr, STRATA_BENCH_TBB(fib::prepare_tbb), STRATA_BENCH_OMP(fib::prepare_omp)),
     k_fib_strata},
    {"uts-t1", "geo fixed b=4 d=10 r=19",
     "UTS T1 (-t 1 -a 3 -d 10 -b 4 -r 19): 4,130,071 SHA-1 nodes, a task per child",
     versions([](unsigned p) { return uts::prepare_serial(uts::k_t1, p); },
              STRATA_BENCH_STRATA([](unsigned p) { return uts::prepare_strata(uts::k_t1, p); }),
              STRATA_BENCH_TBB([](unsigned p) { return uts::prepare_tbb(uts::k_t1, p); }),
              STRATA_BENCH_OMP([](unsigned p) { return uts::prepare_omp(uts::k_t1, p); }))},
    {"uts-t3", "bin b=2000 q=0.124875 m=8 r=42",
     "UTS T3 (-t 0 -b 2000 -q 0.124875 -m 8 -r 42): 4,112,897 nodes, depth 1,572",
     versions([](unsigned p) { return uts::prepare_serial(uts::k_t3, p); },
              STRATA_BENCH_STRATA([](unsigned p) { return uts::prepare_strata(uts::k_t3, p); }),
              STRATA_BENCH_TBB([](unsigned p) { return uts::prepare_tbb(uts::k_t3, p); }),
              STRATA_BENCH_OMP([](unsigned p) { return uts::prepare_omp(uts::k_t3, p); }))},
    {"nqueens", "n=12",
     "BOTS nqueens(12) without cutoff: a task per column at every row, board copied per task",
     versions(nqueens::prepare_serial, STRATA_BENCH_STRATA(nqueens::prepare_strata),
              STRATA_BENCH_TBB(nqueens::prepare_tbb), STRATA_BENCH_OMP(nqueens::prepare_omp))},
    {"skynet", "leaves=10^6",
     "skynet: 10-ary tree of 1,111,111 tasks, sum of the leaf ids",
     versions(skynet::prepare_serial, nullptr, STRATA_BENCH_TBB(skynet::prepare_tbb),
              STRATA_BENCH_OMP(skynet::prepare_omp)),
     k_skynet_strata},
    {"spawn", "tasks=10^6",
     "10^6 detached tasks spawned one by one by one producer, then a wait (the submission path of a main thread)",
     versions(spawn::prepare_serial, nullptr, STRATA_BENCH_TBB(spawn::prepare_tbb),
              STRATA_BENCH_OMP(spawn::prepare_omp)),
     k_spawn_strata, "Mtasks/s", spawn::params},
    {"reduce", "n=10^8 doubles",
     "parallel reduce: sum of 10^8 doubles (800 MB, first-touched by the runtime)",
     versions(reduce::prepare_serial, STRATA_BENCH_STRATA(reduce::prepare_strata),
              STRATA_BENCH_TBB(reduce::prepare_tbb), STRATA_BENCH_OMP(reduce::prepare_omp))},
    {"forkjoin", "iters=10^4, P tasks each",
     "10^4 empty fork-joins of one task per worker (fork-join latency)",
     versions(forkjoin::prepare_serial, STRATA_BENCH_STRATA(forkjoin::prepare_strata),
              STRATA_BENCH_TBB(forkjoin::prepare_tbb), STRATA_BENCH_OMP(forkjoin::prepare_omp))},
    {"stream", "n=2^25",
     "STREAM triad a = b + q*c on 3 x 2^25 doubles, 10 passes a run, 24 B/element; strata once per "
     "page placement",
     {}, k_stream_versions, "GB/s", stream::params},
    {"jacobi", "4096^2, 50 sweeps",
     "2-D 5-point Jacobi, 4096^2 doubles, two grids, 50 sweeps a run, rows split statically",
     versions(jacobi::prepare_serial, STRATA_BENCH_STRATA(jacobi::prepare_strata),
              STRATA_BENCH_TBB(jacobi::prepare_tbb), STRATA_BENCH_OMP(jacobi::prepare_omp)),
     {}, "MLUP/s", jacobi::params},
    {"pingpong", "round-trips=40000",
     "Savina PingPong: 40,000 round trips between two actors, 80,000 messages one at a time (latency)",
     actor_versions(pingpong::prepare_serial, nullptr, STRATA_BENCH_CAF(pingpong::prepare_caf)), k_pingpong_strata,
     "Mmsg/s", nullptr, k_actor_runtimes},
    {"threadring", "actors=100 passes=100000",
     "Savina ThreadRing: a token passed 100,000 times around a ring of 100 actors (hand-off latency)",
     actor_versions(threadring::prepare_serial, nullptr, STRATA_BENCH_CAF(threadring::prepare_caf)),
     k_threadring_strata, "Mmsg/s", nullptr, k_actor_runtimes},
    {"counting", "messages=10^6",
     "Savina Counting: one producer sends 10^6 increments to one counter, then asks for the count (throughput)",
     actor_versions(counting::prepare_serial, STRATA_BENCH_STRATA(counting::prepare_strata),
                    STRATA_BENCH_CAF(counting::prepare_caf)),
     {}, "Mmsg/s", nullptr, k_actor_runtimes},
    {"bank", "accounts=4096 transfers=2000000",
     "bank transfers: 2*10^6 transfers between 4096 accounts, each locking its two accounts; uniform and "
     "Zipf(0.99) account choice",
     {}, k_bank_versions, "Mtransfers/s", bank::params, k_bank_runtimes},
    {"cholesky", "",
     "tiled Cholesky DAG (potrf/trsm/syrk/gemm, naive kernels) on an SPD matrix: 12x12 tiles of 96, 24x24 "
     "tiles of 32",
     {}, k_cholesky_versions, "GFLOP/s"},
}};

}  // namespace

std::span<const benchmark> suite() noexcept { return k_suite; }

}  // namespace strata_bench
