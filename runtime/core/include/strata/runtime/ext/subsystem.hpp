// subsystem: a module's per-runtime state (actors, lock-mode resources, the
// MPI bridge), attached to a runtime on first use and destroyed with it.
//
// Through it a module takes part in three of the core's seams without the
// core knowing what it is:
// - Quiescence. finished() and created() count the module's own units of
//   work that are not task frames (a lock-mode request waiting in a queue
//   holds no frame). Both only grow, and a unit is counted created before
//   anything can count it finished, and before its creator (a task, a
//   message) is counted finished. wait_idle reads finished() of every part
//   (the workers' frame counts and every subsystem) before created() of any,
//   and the runtime is idle when the sums are equal: any unit counted
//   finished was created earlier, so equal sums mean nothing was in flight
//   between the two reads (quiescence.cpp).
// - Counters. add_stats() adds the module's per-worker counters, by name, to
//   a runtime_stats snapshot (they also go into its JSON).
// - Shutdown. on_shutdown() is called first in runtime::shutdown, before the
//   runtime refuses submissions: a module that runs a thread of its own that
//   submits work (the actors' load monitor) stops it there.
// Per-worker work of a module (actor turns) goes through work sources
// (work_source.hpp), registered with runtime_core::add_source.
#pragma once

#include <cstdint>

namespace strata {
struct runtime_stats;
}

namespace strata::detail {

class subsystem {
 public:
  subsystem() = default;
  subsystem(const subsystem&) = delete;
  subsystem& operator=(const subsystem&) = delete;
  virtual ~subsystem() = default;

  virtual std::uint64_t finished() const noexcept { return 0; }
  virtual std::uint64_t created() const noexcept { return 0; }
  virtual void add_stats(runtime_stats&) const {}
  virtual void on_shutdown() noexcept {}
};

// The key a subsystem type is attached under: the address of its
// `static constexpr char key` member (one per type in the program).
using subsystem_key = const void*;

}  // namespace strata::detail
