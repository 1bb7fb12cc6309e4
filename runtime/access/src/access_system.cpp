// access_system: attaching lock mode to a runtime, resources, quiescence
// and counters (design in access_system.hpp).
#include "access_system.hpp"

#include <limits>
#include <string>

#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>

namespace strata {

namespace detail {

access_system::access_system(runtime_core& c)
    : core(c),
      front_runs(c.settings.reader_front_runs),
      admission(64 * static_cast<std::uint64_t>(c.workers.size())),
      m_counters(std::make_unique<access_counters[]>(c.workers.size())) {}

std::uint64_t access_system::finished() const noexcept {
  // acquire: pairs with the release increments (count, run_access_chain).
  std::uint64_t n = m_external_released.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < core.workers.size(); ++i) n += m_counters[i].released.get();
  return n;
}

std::uint64_t access_system::created() const noexcept {
  std::uint64_t n = m_external_submitted.load(std::memory_order_acquire);  // acquire: as in finished()
  for (std::size_t i = 0; i < core.workers.size(); ++i) n += m_counters[i].submitted.get();
  return n;
}

void access_system::count(bool released) noexcept {
  worker* w = current_worker();
  if (w != nullptr && w->rt == &core) {
    (released ? m_counters[w->index].released : m_counters[w->index].submitted).add();
    return;
  }
  // release: wait_idle's acquire reads.
  (released ? m_external_released : m_external_submitted).fetch_add(1, std::memory_order_release);
}

void access_system::add_stats(runtime_stats& s) const {
  for (auto& ws : s.workers) {
    const access_counters& c = m_counters[ws.worker];
    ws.set_counter("lock_requests", c.submitted.get());
    ws.set_counter("lock_requests_queued", c.queued.get());
  }
}

}  // namespace detail

resource runtime::make_resource() {
  auto& d = detail::subsystem_of<detail::access_system>(*m_core);
  std::lock_guard lock(d.create_mutex);
  if (!d.free.empty()) {
    // A released state: idle since its release (release_resource checked),
    // its queue in `waiting` kept for its id.
    detail::resource_state* s = d.free.back();
    d.free.pop_back();
    s->front_runs.store(0, std::memory_order_relaxed);
    return resource(s, s->id, m_core.get(), s->generation.load(std::memory_order_relaxed));
  }
  if (d.resources.size() >= std::numeric_limits<std::uint32_t>::max() - 1) {
    throw usage_error("strata::runtime::make_resource: 2^32 - 2 resources exist; release_resource the unused ones");
  }
  auto& s = d.resources.emplace_back();
  s.id = static_cast<std::uint32_t>(d.resources.size());
  s.owner = m_core.get();
  s.sys = &d;
  std::lock_guard queues(d.mutex);  // the dispatcher reads `waiting` under it
  try {
    d.waiting.emplace_back();
  } catch (...) {
    d.resources.pop_back();
    throw;
  }
  return resource(&s, s.id, m_core.get());
}

void runtime::release_resource(resource r) {
  auto fail = [&](const std::string& why) {
    throw usage_error("strata::runtime::release_resource: " + why);
  };
  if (!r.valid()) fail("the resource is empty (default-constructed)");
  if (r.owner() != m_core.get()) fail("resource " + std::to_string(r.id()) + " belongs to another runtime");
  auto& d = detail::subsystem_of<detail::access_system>(*m_core);
  std::lock_guard lock(d.create_mutex);
  detail::resource_state& s = *r.state();
  if (s.generation.load(std::memory_order_relaxed) != r.generation()) {
    fail("resource " + std::to_string(r.id()) + " was released already (this handle is stale)");
  }
  d.free.reserve(d.free.size() + 1);  // may throw: nothing changed yet
  {
    std::lock_guard queues(d.mutex);
    // seq_cst: as the releasers' reads of the word and `waiters`.
    const std::uint32_t w = s.word.load();
    const bool busy = (w & (detail::lock_word::k_write | detail::lock_word::k_readers_mask |
                            detail::lock_word::k_ticket_mask)) != 0 ||
                      s.waiters.load() != 0 || !d.waiting[s.id - 1].empty();
    if (busy) {
      fail("resource " + std::to_string(r.id()) +
           " is held or awaited by a task; accepted: a resource whose tasks have finished (wait on their "
           "futures, wait_idle() or the dataflow graph's wait() first)");
    }
    s.generation.store(s.generation.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  d.free.push_back(&s);
}

}  // namespace strata
