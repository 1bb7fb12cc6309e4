// runtime::stats() and runtime_stats::to_json(): the one format benches and
// jobs consume.
#include <chrono>

#include <strata/runtime/profile.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <nlohmann/json.hpp>

#include "lanes.hpp"

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
    ws.set_counter("lane_tasks", c.from_lanes.get());  // taken from external threads' lanes (lanes.hpp)
    // The idle worker's local spin now, in rounds (adapted: parking.cpp).
    ws.set_counter("local_spin_limit", c.local_spin_limit.get());
    if (rt.settings.policy == policy::hybrid) ws.set_counter("spilled_tasks", c.spilled.get());  // policy.cpp
    s.workers.push_back(std::move(ws));
  }
  s.external_submits = rt.external_created.load(std::memory_order_relaxed) + detail::lanes_created(rt);  // relaxed: statistics
  s.policy = to_string(rt.settings.policy);
  s.external_spills = rt.external_spills.load(std::memory_order_relaxed);  // relaxed: statistics
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
  using json = nlohmann::ordered_json;
  json out;
  out["policy"] = policy;
  out["external_submits"] = external_submits;
  if (policy == "hybrid") out["external_spills"] = external_spills;
  out["total_executed"] = total_executed();
  out["total_stolen"] = total_stolen();
  json list = json::array();
  for (const auto& w : workers) {
    json j;
    j["worker"] = w.worker;
    j["pu"] = w.pu;
    j["numa_node"] = w.numa_node;
    j["pinned"] = w.pinned;
    j["tasks_executed"] = w.tasks_executed;
    j["tasks_spawned"] = w.tasks_spawned;
    j["tasks_stolen"] = w.tasks_stolen;
    json tiers = json::array();
    for (std::size_t k = 0; k < w.steals_by_tier.size(); ++k) {
      tiers.push_back({{"tier", k}, {"kind", w.tier_kinds[k]}, {"steals", w.steals_by_tier[k]}});
    }
    j["steals_by_tier"] = std::move(tiers);
    j["steal_attempts"] = w.steal_attempts;
    j["steal_failures"] = w.steal_failures;
    j["injector_tasks"] = w.injector_tasks;
    j["inbox_tasks"] = w.inbox_tasks;
    j["inbox_depth"] = w.inbox_depth;
    j["deque_high_water"] = w.deque_high_water;
    j["publishes"] = w.publishes;
    j["parks"] = w.parks;
    j["wakeups"] = w.wakeups;
    j["boxed_tasks"] = w.boxed_tasks;
    j["detached_exceptions"] = w.detached_exceptions;
    for (const auto& [name, value] : w.counters) j[name] = value;
    j["busy_s"] = w.busy_s;
    j["idle_s"] = w.idle_s;
    list.push_back(std::move(j));
  }
  out["workers"] = std::move(list);
  // Profile regions (profile.hpp; process-wide), with their perf_event totals.
  if (const auto regions = profile::counts(); !regions.empty()) {
    json list_r = json::array();
    for (const auto& rc : regions) {
      json j = {{"name", rc.name}, {"entries", rc.entries}, {"likwid_status", rc.likwid_status}};
      for (const auto& [name, value] : rc.perf) j[name] = value;
      list_r.push_back(std::move(j));
    }
    out["regions"] = std::move(list_r);
  }
  if (!unavailable_counters.empty()) {
    json why = json::object();
    for (const auto& [name, reason] : unavailable_counters) why[name] = reason;
    out["perf_unavailable"] = std::move(why);
  }
  return out.dump();
}

}  // namespace strata
