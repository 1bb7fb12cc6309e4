// placement_plan reports: JSON, placement table, tier table.
#include <strata/topology/placement.hpp>

#include <cstdio>
#include <sstream>

#include "topology_json.hpp"

namespace strata {
namespace {

std::string worker_list(const std::vector<unsigned>& ws) {
  std::vector<int> v(ws.begin(), ws.end());
  return format_cpu_list(v);
}

}  // namespace

std::string placement_plan::to_json() const {
  using nlohmann::ordered_json;
  ordered_json placement = ordered_json::array();
  for (const auto& p : m_workers) {
    placement.push_back({{"worker", p.worker},
                         {"pu", p.pu_os_index},
                         {"core", p.core},
                         {"l3", p.l3},
                         {"numa_node", p.numa_node},
                         {"package", p.package}});
  }
  // "tiers": per worker, its tiers' worker lists; "tier_kinds": per worker,
  // the kind and distance of the same tiers.
  ordered_json tiers = ordered_json::array();
  ordered_json tier_kinds = ordered_json::array();
  for (const auto& tl : m_tiers) {
    ordered_json workers = ordered_json::array();
    ordered_json kinds = ordered_json::array();
    for (const auto& t : tl) {
      workers.push_back(t.workers);
      kinds.push_back({{"kind", to_string(t.kind)}, {"distance", t.distance}});
    }
    tiers.push_back(std::move(workers));
    tier_kinds.push_back(std::move(kinds));
  }
  ordered_json j;
  j["topology"] = detail::topology_json(m_machine);
  j["places"] = m_places;
  j["bind"] = to_string(m_bind);
  j["pinned"] = pins();
  j["num_workers"] = m_workers.size();
  j["placement"] = std::move(placement);
  j["tiers"] = std::move(tiers);
  j["tier_kinds"] = std::move(tier_kinds);
  j["notes"] = m_notes;
  return detail::json_text(j);
}

std::string placement_plan::placement_table() const {
  std::ostringstream o;
  o << "strata placement: " << m_workers.size() << " worker(s), places=" << m_places << ", bind=" << to_string(m_bind)
    << (pins() ? "" : " (not pinned)") << "\n";
  o << "  worker    PU  core    L3  NUMA  package\n";
  for (const auto& p : m_workers) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "  %6u %5d %5d %5d %5d %8d\n", p.worker, p.pu_os_index, p.core, p.l3, p.numa_node,
                  p.package);
    o << buf;
  }
  return o.str();
}

std::string placement_plan::tiers_table() const {
  std::ostringstream o;
  o << "Steal tiers (nearest first; kind/NUMA distance: workers):\n";
  for (std::size_t w = 0; w < m_tiers.size(); ++w) {
    o << "  worker " << w << ":";
    if (m_tiers[w].empty()) o << " (no victims)";
    for (const auto& t : m_tiers[w]) {
      o << "  " << to_string(t.kind) << "/" << t.distance << ": {" << worker_list(t.workers) << "}";
    }
    o << "\n";
  }
  return o.str();
}

std::string placement_plan::describe() const {
  std::ostringstream o;
  o << m_machine.describe() << "\n" << placement_table() << "\n" << tiers_table() << "\n";
  const cpu_limits& l = m_machine.limits();
  o << "CPUs: machine " << format_cpu_list(l.machine_pus) << ", allowed " << format_cpu_list(l.allowed_pus)
    << ", process binding " << format_cpu_list(l.bound_pus) << ", usable " << format_cpu_list(l.usable_pus) << "\n";
  o << "What decided this:\n";
  for (const auto& n : m_notes) o << "  - " << n << "\n";
  return o.str();
}

}  // namespace strata
