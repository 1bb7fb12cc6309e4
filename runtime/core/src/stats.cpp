// runtime::stats() and runtime_stats::to_json(): the one format benches and
// jobs consume.
#include <chrono>

#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/topology/ext/json_writer.hpp>

namespace strata {
namespace {

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

double seconds(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

runtime_stats runtime::stats() const {
  const auto& rt = *m_core;
  runtime_stats s;
  const std::uint64_t elapsed = now_ns() - rt.start_ns;
  for (std::size_t i = 0; i < rt.workers.size(); ++i) {
    const auto& w = *rt.workers[i];
    const auto& c = w.counters;
    const auto& place = rt.plan.workers()[i];
    worker_stats ws;
    ws.worker = static_cast<unsigned>(i);
    ws.pu = place.pu_os_index;
    ws.numa_node = place.numa_node;
    ws.pinned = rt.pinned;
    ws.tasks_executed = detail::tasks_executed(w);
    ws.tasks_spawned = detail::tasks_spawned(w);
    for (std::size_t k = 0; k < rt.plan.tiers_of(ws.worker).size() && k < detail::k_max_tiers; ++k) {
      ws.steals_by_tier.push_back(c.steals_by_tier[k].get());
      ws.tier_kinds.emplace_back(to_string(rt.plan.tiers_of(ws.worker)[k].kind));
    }
    ws.tasks_stolen = c.stolen.get();
    ws.steal_attempts = c.steal_attempts.get();
    ws.steal_failures = c.steal_failures.get();
    ws.injector_tasks = c.injector.get();
    ws.inbox_tasks = c.inbox.get();
    ws.inbox_depth = w.inbox.depth();
    ws.deque_high_water = c.high_water.get();
    ws.publishes = c.publishes.get();
    ws.parks = c.parks.get();
    ws.wakeups = c.wakeups.get();
    ws.boxed_tasks = c.boxed.get();
    ws.detached_exceptions = c.detached_exceptions.get();
    const std::uint64_t idle = c.idle_ns.get();
    ws.idle_s = seconds(idle);
    ws.busy_s = seconds(elapsed > idle ? elapsed - idle : 0);
    s.workers.push_back(std::move(ws));
  }
  s.external_submits = rt.external_created.load(std::memory_order_relaxed);  // relaxed: statistics
  rt.for_each_subsystem([&s](const detail::subsystem& sub) { sub.add_stats(s); });
  return s;
}

std::uint64_t worker_stats::counter(std::string_view name) const noexcept {
  for (const auto& [key, value] : counters) {
    if (key == name) return value;
  }
  return 0;
}

bool worker_stats::has_counter(std::string_view name) const noexcept {
  for (const auto& kv : counters) {
    if (kv.first == name) return true;
  }
  return false;
}

void worker_stats::set_counter(std::string_view name, std::uint64_t value) {
  for (auto& kv : counters) {
    if (kv.first == name) {
      kv.second = value;
      return;
    }
  }
  counters.emplace_back(std::string(name), value);
}

std::uint64_t runtime_stats::total_executed() const noexcept {
  std::uint64_t n = 0;
  for (const auto& w : workers) n += w.tasks_executed;
  return n;
}

std::uint64_t runtime_stats::total_stolen() const noexcept {
  std::uint64_t n = 0;
  for (const auto& w : workers) n += w.tasks_stolen;
  return n;
}

std::string runtime_stats::to_json() const {
  json_writer j;
  j.begin_object();
  j.key("external_submits"); j.value(static_cast<unsigned long long>(external_submits));
  j.key("total_executed"); j.value(static_cast<unsigned long long>(total_executed()));
  j.key("total_stolen"); j.value(static_cast<unsigned long long>(total_stolen()));
  j.key("workers");
  j.begin_array();
  for (const auto& w : workers) {
    j.begin_object();
    j.key("worker"); j.value(w.worker);
    j.key("pu"); j.value(w.pu);
    j.key("numa_node"); j.value(w.numa_node);
    j.key("pinned"); j.value(w.pinned);
    j.key("tasks_executed"); j.value(static_cast<unsigned long long>(w.tasks_executed));
    j.key("tasks_spawned"); j.value(static_cast<unsigned long long>(w.tasks_spawned));
    j.key("tasks_stolen"); j.value(static_cast<unsigned long long>(w.tasks_stolen));
    j.key("steals_by_tier");
    j.begin_array();
    for (std::size_t k = 0; k < w.steals_by_tier.size(); ++k) {
      j.begin_object();
      j.key("tier"); j.value(static_cast<unsigned long>(k));
      j.key("kind"); j.value(w.tier_kinds[k]);
      j.key("steals"); j.value(static_cast<unsigned long long>(w.steals_by_tier[k]));
      j.end_object();
    }
    j.end_array();
    j.key("steal_attempts"); j.value(static_cast<unsigned long long>(w.steal_attempts));
    j.key("steal_failures"); j.value(static_cast<unsigned long long>(w.steal_failures));
    j.key("injector_tasks"); j.value(static_cast<unsigned long long>(w.injector_tasks));
    j.key("inbox_tasks"); j.value(static_cast<unsigned long long>(w.inbox_tasks));
    j.key("inbox_depth"); j.value(static_cast<unsigned long long>(w.inbox_depth));
    j.key("deque_high_water"); j.value(static_cast<unsigned long long>(w.deque_high_water));
    j.key("publishes"); j.value(static_cast<unsigned long long>(w.publishes));
    j.key("parks"); j.value(static_cast<unsigned long long>(w.parks));
    j.key("wakeups"); j.value(static_cast<unsigned long long>(w.wakeups));
    j.key("boxed_tasks"); j.value(static_cast<unsigned long long>(w.boxed_tasks));
    j.key("detached_exceptions"); j.value(static_cast<unsigned long long>(w.detached_exceptions));
    for (const auto& [name, value] : w.counters) {
      j.key(name); j.value(static_cast<unsigned long long>(value));
    }
    j.key("busy_s"); j.value(w.busy_s);
    j.key("idle_s"); j.value(w.idle_s);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

}  // namespace strata
