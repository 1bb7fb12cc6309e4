// placement_plan reports: JSON, placement table, tier table.
#include <strata/topology/ext/json_writer.hpp>
#include <strata/topology/placement.hpp>

#include <cstdio>
#include <sstream>

namespace strata {
namespace {

std::string worker_list(const std::vector<unsigned>& ws) {
  std::vector<int> v(ws.begin(), ws.end());
  return format_cpu_list(v);
}

}  // namespace

std::string placement_plan::to_json() const {
  json_writer w;
  w.begin_object();
  w.key("topology"); w.raw(m_machine.to_json());
  w.key("places"); w.value(m_places);
  w.key("bind"); w.value(to_string(m_bind));
  w.key("pinned"); w.value(pins());
  w.key("num_workers"); w.value(static_cast<unsigned long>(m_workers.size()));
  w.key("placement");
  w.begin_array();
  for (const auto& p : m_workers) {
    w.begin_object();
    w.key("worker"); w.value(p.worker);
    w.key("pu"); w.value(p.pu_os_index);
    w.key("core"); w.value(p.core);
    w.key("l3"); w.value(p.l3);
    w.key("numa_node"); w.value(p.numa_node);
    w.key("package"); w.value(p.package);
    w.end_object();
  }
  w.end_array();
  w.key("tiers");
  w.begin_array();
  for (const auto& tl : m_tiers) {
    w.begin_array();
    for (const auto& t : tl) w.int_array(t.workers);
    w.end_array();
  }
  w.end_array();
  w.key("tier_kinds");
  w.begin_array();
  for (const auto& tl : m_tiers) {
    w.begin_array();
    for (const auto& t : tl) {
      w.begin_object();
      w.key("kind"); w.value(to_string(t.kind));
      w.key("distance"); w.value(t.distance);
      w.end_object();
    }
    w.end_array();
  }
  w.end_array();
  w.key("notes");
  w.begin_array();
  for (const auto& n : m_notes) w.value(n);
  w.end_array();
  w.end_object();
  return w.str();
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
