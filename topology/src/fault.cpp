// The fault-injection seam (design in <strata/topology/ext/fault.hpp>).
#include <strata/topology/ext/fault.hpp>

#include <array>
#include <atomic>
#include <mutex>

namespace strata::fault {

const char* name(site s) noexcept {
  switch (s) {
    case site::thread_create: return "thread_create";
    case site::mmap: return "mmap";
    case site::mbind: return "mbind";
    case site::perf_event_open: return "perf_event_open";
    case site::hwloc_xml: return "hwloc_xml";
    case site::hwloc_load: return "hwloc_load";
  }
  return "unknown";
}

#if STRATA_FAULT_INJECTION
namespace {

// One site's plan. `armed` is written under g_mutex (release) and read
// without it (acquire) by fail_here's fast path; every other field is
// read and written under g_mutex only.
struct plan {
  std::atomic<bool> armed{false};
  int error = 0;
  std::uint64_t skip = 0;
  std::uint64_t times = 0;
  std::uint64_t injected = 0;
  std::uint64_t calls = 0;
};

std::mutex g_mutex;
std::array<plan, k_sites> g_plans;

plan& plan_of(site s) noexcept { return g_plans[static_cast<unsigned>(s)]; }

}  // namespace

void arm(site s, int error, std::uint64_t skip, std::uint64_t times) noexcept {
  std::lock_guard lock(g_mutex);
  plan& p = plan_of(s);
  p.error = error > 0 ? error : 1;
  p.skip = skip;
  p.times = times;
  p.armed.store(times != 0, std::memory_order_release);  // release: pairs with the acquire in fail_here
}

void disarm(site s) noexcept {
  std::lock_guard lock(g_mutex);
  plan& p = plan_of(s);
  p.times = 0;
  p.armed.store(false, std::memory_order_release);  // release: pairs with the acquire in fail_here
}

void disarm_all() noexcept {
  for (unsigned i = 0; i < k_sites; ++i) disarm(static_cast<site>(i));
}

std::uint64_t injected(site s) noexcept {
  std::lock_guard lock(g_mutex);
  return plan_of(s).injected;
}

std::uint64_t armed_calls(site s) noexcept {
  std::lock_guard lock(g_mutex);
  return plan_of(s).calls;
}

int fail_here(site s) noexcept {
  plan& p = plan_of(s);
  // acquire: pairs with the release in arm/disarm (the decision below is
  // made under the mutex anyway; this load only keeps disarmed sites cheap).
  if (!p.armed.load(std::memory_order_acquire)) return 0;
  std::lock_guard lock(g_mutex);
  if (p.times == 0) return 0;  // disarmed between the load and the lock
  ++p.calls;
  if (p.skip != 0) {
    --p.skip;
    return 0;
  }
  ++p.injected;
  if (--p.times == 0) p.armed.store(false, std::memory_order_release);  // release: as in disarm
  return p.error;
}
#endif

}  // namespace strata::fault
