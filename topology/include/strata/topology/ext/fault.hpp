// fault: a test-only seam that makes the system underneath the runtime fail.
//
// The problem. The runtime's error paths (a worker thread that cannot be
// made, the kernel refusing memory or a binding, perf_event_open or hwloc
// refusing) only run on machines that are out of something, so no ordinary
// test reaches them, and untested error paths are where runtimes lose work,
// leak or hang.
//
// The seam. Each such call in the library goes through one check first:
//   if (const int e = fault::fail_here(fault::site::mmap); e != 0) { ... as if the call failed with e ... }
// A test arms a site: after `skip` calls pass, the next `times` calls fail
// with `error` (an errno value), and the site counts what it injected. The
// library never arms a site itself and no environment variable does: only a
// test program can (tests/fault/).
//
// Cost. Built only when STRATA_FAULT_INJECTION is on (dev and sanitizer
// builds; off in Release, where fail_here is a constant 0 and the arming
// functions are absent). When built, a disarmed site costs one atomic load,
// and every site is a cold path (thread start, a 64 KiB+ mapping, a
// binding, a counter or topology load), never a task's path.
//
// Concurrency. Arming takes a mutex and publishes the site with a release
// store of `armed`; fail_here reads `armed` with acquire and decides under
// the same mutex, so `skip` and `times` are exact even when workers reach a
// site together.
#pragma once

#include <cstdint>

#include <strata/config.hpp>

namespace strata::fault {

enum class site : unsigned {
  thread_create,    // pthread_create of a worker, std::thread of the actor monitor
  mmap,             // numa_alloc's mappings (arena chunks, large blocks: frame slabs, deque buffers)
  mbind,            // numa_alloc binding a mapping to its node
  perf_event_open,  // one counter of one worker (or of a profile region's thread)
  hwloc_xml,        // hwloc_topology_set_xml on a file
  hwloc_load,       // hwloc_topology_load (this machine, synthetic, XML)
};
inline constexpr unsigned k_sites = 6;

// The site's name, for messages ("mmap").
const char* name(site s) noexcept;

#if STRATA_FAULT_INJECTION
// After `skip` further calls at `s` succeed, the next `times` fail with
// `error` (a positive errno value). Re-arming replaces the previous plan.
void arm(site s, int error, std::uint64_t skip = 0, std::uint64_t times = 1) noexcept;
void disarm(site s) noexcept;
void disarm_all() noexcept;
// Failures injected at `s` since the process started.
std::uint64_t injected(site s) noexcept;
// Calls that reached `s` while it was armed (passed or failed).
std::uint64_t armed_calls(site s) noexcept;
// At a site: 0 to go on with the real call, or the errno to fail with.
int fail_here(site s) noexcept;
#else
constexpr int fail_here(site) noexcept { return 0; }
#endif

}  // namespace strata::fault
