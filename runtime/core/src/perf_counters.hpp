// Per-worker perf_event counters (STRATA_PERF_COUNTERS=1, config.perf_counters).
//
// At start the runtime opens, for each worker thread (by its kernel thread
// id, from the constructing thread, after the workers exist), one counter
// per event below with perf_event_open(2): software events (context
// switches, CPU migrations, page faults) everywhere, hardware events
// (cycles, instructions, last-level cache misses) where the machine has a
// PMU. An event the kernel refuses on the first worker is not tried on the
// others and is reported once, with the kernel's reason, in
// runtime_stats::unavailable_counters. stats() reads each counter (read(2)
// of a counting event is safe from any thread) into the worker's counters
// as "perf.<event>". The counters count from the runtime's start.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/subsystem.hpp>

namespace strata::detail {

class perf_counters final : public subsystem {
 public:
  static constexpr char key = 0;
  explicit perf_counters(runtime_core& rt);
  ~perf_counters() override;
  void add_stats(runtime_stats& s) const override;

 private:
  std::vector<std::vector<int>> m_fds;  // [worker][event]; -1: not open
  std::vector<std::pair<std::string, std::string>> m_unavailable;  // event, why
};

// Attaches the counters to rt (the runtime's constructor, when asked).
void attach_perf_counters(runtime_core& rt);

// For profile regions (profile.hpp): whether any runtime of the process
// counts now, and the calling thread's own counters, opened on its first
// call (events the kernel refuses are left out). Reads at most `cap`
// values into out, names[i] naming out[i]; returns how many.
bool region_counters_on() noexcept;
std::size_t read_thread_counters(std::uint64_t* out, const char** names, std::size_t cap) noexcept;

}  // namespace strata::detail
