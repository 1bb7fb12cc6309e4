#include "harness/affinity.hpp"

#include "common/bench.hpp"

#if defined(STRATA_BENCH_HAVE_OPENMP) && !defined(STRATA_BENCH_LLVM_HELPER)
#include <pthread.h>
#include <sched.h>

#include <optional>
#include <vector>

#include <omp.h>
#endif

namespace strata_bench {

#if defined(STRATA_BENCH_HAVE_OPENMP) && !defined(STRATA_BENCH_LLVM_HELPER)
namespace {

struct remembered {
  cpu_set_t first_place;  // where libgomp pinned the initial thread
  cpu_set_t all_places;   // the CPUs of every place
};
std::optional<remembered> g_masks;  // set once by remember_main_thread_affinity, before any other thread

}  // namespace

void remember_main_thread_affinity() {
  if (omp_get_proc_bind() == omp_proc_bind_false || omp_get_num_places() <= 0) {
    return;  // libgomp did not pin the initial thread
  }
  remembered m{};
  CPU_ZERO(&m.first_place);
  CPU_ZERO(&m.all_places);
  if (pthread_getaffinity_np(pthread_self(), sizeof m.first_place, &m.first_place) != 0) {
    return;
  }
  for (int place = 0; place < omp_get_num_places(); ++place) {
    std::vector<int> ids(static_cast<std::size_t>(omp_get_place_num_procs(place)));
    omp_get_place_proc_ids(place, ids.data());
    for (int cpu : ids) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) {
        CPU_SET(cpu, &m.all_places);
      }
    }
  }
  if (CPU_COUNT(&m.all_places) > 0) {
    g_masks = m;
  }
}

unsigned process_cpus() {
  if (!g_masks) return usable_cpus();
  return static_cast<unsigned>(CPU_COUNT(&g_masks->all_places));
}

void set_main_thread_affinity_for(runtime_id r) {
  if (!g_masks) {
    return;
  }
  const cpu_set_t& mask = r == runtime_id::omp ? g_masks->first_place : g_masks->all_places;
  pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);  // best effort: a refusal leaves it as it was
}

#else

void remember_main_thread_affinity() {}
unsigned process_cpus() { return usable_cpus(); }
void set_main_thread_affinity_for(runtime_id /*r*/) {}

#endif

}  // namespace strata_bench
