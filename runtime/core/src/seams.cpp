// The seams' registries: subsystems attached to a runtime, work sources
// registered on its workers (design in ext/subsystem.hpp, ext/work_source.hpp).
#include <cstdio>
#include <cstdlib>
#include <string>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/assert.hpp>
#include <strata/runtime/ext/core.hpp>

#include "injector.hpp"
#include "lanes.hpp"

namespace strata::detail {

namespace {
std::atomic<std::uint64_t> g_next_runtime_id{1};  // relaxed: only uniqueness matters
}  // namespace

runtime_core::runtime_core(placement_plan p, const runtime_config& s)
    : plan(std::move(p)), settings(s), id(g_next_runtime_id.fetch_add(1, std::memory_order_relaxed)) {}

runtime_core::~runtime_core() {
  // Work sources first (their state, such as an actor's destructor, may use
  // their subsystem), then the subsystems, youngest first (a later one may
  // use an earlier one), then (members) the workers.
  owned_sources.clear();
  while (!owned_subsystems.empty()) owned_subsystems.pop_back();
  // Threads that still hold a lane of this runtime drop it on their next
  // lookup (lanes.cpp, caller_lane).
  for (auto& l : owned_lanes) l->claim->runtime_gone.store(true, std::memory_order_release);
}

subsystem* runtime_core::find(subsystem_key key) const noexcept {
  const unsigned n = num_subsystems.load(std::memory_order_acquire);  // acquire: pairs with attach's release
  for (unsigned i = 0; i < n; ++i) {
    if (subsystems[i].key == key) return subsystems[i].object;
  }
  return nullptr;
}

subsystem& runtime_core::attach(subsystem_key key, const std::function<std::unique_ptr<subsystem>()>& make) {
  std::lock_guard lock(seam_mutex);
  if (subsystem* s = find(key)) return *s;  // attached meanwhile
  const unsigned n = num_subsystems.load(std::memory_order_relaxed);  // relaxed: written under the mutex
  if (n == k_max_subsystems) {
    throw runtime_error("strata: a runtime takes at most " + std::to_string(k_max_subsystems) + " subsystems");
  }
  owned_subsystems.push_back(make());
  subsystems[n] = {key, owned_subsystems.back().get()};
  num_subsystems.store(n + 1, std::memory_order_release);  // release: publishes the entry to find()
  return *subsystems[n].object;
}

unsigned runtime_core::add_source(const std::function<work_source*(worker&)>& make) {
  std::lock_guard lock(seam_mutex);  // the index is the same on every worker
  const unsigned index = workers.empty() ? 0 : workers[0]->num_sources.load(std::memory_order_relaxed);
  if (index == k_max_sources) {
    throw runtime_error("strata: a worker takes at most " + std::to_string(k_max_sources) + " work sources");
  }
  std::vector<work_source*> made;
  made.reserve(workers.size());
  for (auto& w : workers) {
    made.push_back(make(*w));
    owned_sources.emplace_back(made.back());
  }
  // Checked on every worker before any is changed: the index stays the same
  // on all of them.
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (made[i]->supplies_idle_wait() && workers[i]->idle_waiter.load(std::memory_order_relaxed) != nullptr) {
      // relaxed: written under the mutex
      throw usage_error("strata: worker " + std::to_string(i) +
                        " already has a work source that supplies its idle wait; at most one may");
    }
  }
  for (std::size_t i = 0; i < workers.size(); ++i) {
    worker& w = *workers[i];
    STRATA_ASSERT(w.num_sources.load(std::memory_order_relaxed) == index, "sources share their index on every worker");
    w.sources[index] = made[i];
    if (made[i]->supplies_idle_wait()) {
      // seq_cst: against the parker's and the wakers' seq_cst loads (parking.cpp, wake_sleeper).
      w.idle_waiter.store(made[i], std::memory_order_seq_cst);
    }
    w.num_sources.store(index + 1, std::memory_order_release);  // release: publishes sources[index] to the owner
  }
  // A worker that parked before the source existed has not consulted it (and
  // one that sleeps on its futex would not notice the source's own events):
  // wake every sleeper; it searches again, the new source included.
  for (auto& w : workers) notify_worker(*w);
  return index;
}

void work_source::accept(worker&, task*) noexcept {
  STRATA_ASSERT(false, "a routed frame reached a work source that takes none");
}

void work_source::idle_wait(worker&) noexcept {}

void assert_failed(const char* cond, const char* what, const char* file, int line) noexcept {
  std::fprintf(stderr, "strata: invariant violated at %s:%d: %s (%s)\n", file, line, what, cond);
  std::abort();
}

}  // namespace strata::detail
