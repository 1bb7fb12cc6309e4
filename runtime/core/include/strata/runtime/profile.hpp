// Profiling regions: likwid Marker API regions, on every thread that enters one.
//
//   { strata::profile::region r{"assemble"}; ... }   // a worker, the main thread, any thread
//
// Built with STRATA_WITH_LIKWID=ON (CMake; Debian package likwid), a region
// starts and stops the likwid Marker region of its name on the calling
// thread (the Marker API is initialised on first use and closed at exit,
// every worker thread registers with it at start), so that
//   likwid-perfctr -m -g MEM -C <cores> ./app
// reports the region per thread. Without it a region compiles to nothing.
// counts() says, per region name, how many times threads entered it and
// what likwid answered the last time (0: measured; -14 (-EFAULT): the
// program does not run under likwid-perfctr -m).
//
// perf_event per region: while a runtime of the process counts
// (STRATA_PERF_COUNTERS=1), a region also reads the calling thread's own
// perf_event counters (opened on the thread's first such region: software
// events everywhere, hardware ones where the PMU exists) at entry and exit
// and adds the differences to its name's `perf` totals; they appear in
// counts() and under "regions" in runtime_stats::to_json(). Regions are
// process-wide: every runtime's JSON shows them all.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace strata::profile {

struct region_count {
  std::string name;
  std::uint64_t entries = 0;
  int likwid_status = 0;
  // perf_event counts summed over the region's entries ("perf.page_faults",
  // ...); empty unless a runtime counted while threads were inside.
  std::vector<std::pair<std::string, std::uint64_t>> perf;
};

#ifdef STRATA_WITH_LIKWID
inline constexpr bool k_enabled = true;

class region {
 public:
  explicit region(const char* name);
  ~region();
  region(const region&) = delete;
  region& operator=(const region&) = delete;

  static constexpr std::size_t k_max_perf = 8;

 private:
  const char* m_name;
  std::uint64_t m_perf[k_max_perf];  // the thread's counters at entry
  std::uint32_t m_perf_n = 0;        // how many were read (0: none)
};

// Registers the calling thread with the Marker API (the workers do it at
// start; a region does it on a thread's first entry).
void register_thread();
std::vector<region_count> counts();
#else
inline constexpr bool k_enabled = false;

class region {
 public:
  explicit region(const char*) noexcept {}
  region(const region&) = delete;
  region& operator=(const region&) = delete;
};

inline void register_thread() noexcept {}
inline std::vector<region_count> counts() { return {}; }
#endif

}  // namespace strata::profile
