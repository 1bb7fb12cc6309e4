// likwid Marker regions (design in <strata/runtime/profile.hpp>). Compiled
// only with STRATA_WITH_LIKWID.
#include <strata/runtime/profile.hpp>

#ifdef STRATA_WITH_LIKWID
#include <likwid-marker.h>
#include <likwid.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "perf_counters.hpp"

namespace strata::profile {
namespace {

struct registry {
  std::mutex m;
  std::map<std::string, region_count, std::less<>> by_name;
};

registry& the_registry() {
  static registry r;
  return r;
}

// The Marker API once per process, closed at exit (likwid writes its
// results file there when it runs under likwid-perfctr -m).
void init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    likwid_markerInit();
    std::atexit([] { likwid_markerClose(); });
  });
}

thread_local bool t_registered = false;

void count(const char* name, int status) {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  auto it = r.by_name.find(name);
  if (it == r.by_name.end()) it = r.by_name.emplace(name, region_count{name, 0, 0, {}}).first;
  it->second.entries++;
  it->second.likwid_status = status;
}

}  // namespace

void register_thread() {
  init_once();
  if (t_registered) return;
  t_registered = true;
  likwid_markerThreadInit();
}

region::region(const char* name) : m_name(name) {
  register_thread();
  count(name, likwid_markerStartRegion(name));
  if (detail::region_counters_on()) {
    const char* names[k_max_perf];
    m_perf_n = static_cast<std::uint32_t>(detail::read_thread_counters(m_perf, names, k_max_perf));
  }
}

region::~region() {
  likwid_markerStopRegion(m_name);
  if (m_perf_n == 0) return;
  std::uint64_t now[k_max_perf];
  const char* names[k_max_perf];
  const std::size_t n = detail::read_thread_counters(now, names, m_perf_n);
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  auto& totals = r.by_name[m_name].perf;  // entered: the entry exists
  for (std::size_t i = 0; i < n; ++i) {
    const std::string key = std::string("perf.") + names[i];
    auto it = std::find_if(totals.begin(), totals.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == totals.end()) it = totals.insert(totals.end(), {key, 0});
    it->second += now[i] >= m_perf[i] ? now[i] - m_perf[i] : 0;
  }
}

std::vector<region_count> counts() {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  std::vector<region_count> out;
  for (const auto& [name, c] : r.by_name) out.push_back(c);
  return out;
}

}  // namespace strata::profile
#endif
