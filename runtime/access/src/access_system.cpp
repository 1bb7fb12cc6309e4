// access_system: attaching lock mode to a runtime, resources, quiescence
// and counters (design in access_system.hpp).
#include "access_system.hpp"

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
  auto& s = d.resources.emplace_back();
  s.id = static_cast<std::uint32_t>(d.resources.size());
  s.owner = m_core.get();
  s.sys = &d;
  std::lock_guard queues(d.mutex);  // the dispatcher reads `waiting` under it
  d.waiting.emplace_back();
  return resource(&s, s.id, m_core.get());
}

}  // namespace strata
