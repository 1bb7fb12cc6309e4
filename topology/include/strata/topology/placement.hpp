// Placement: which PU each worker runs on, and whom it steals from.
//
// placement_plan::compute(placement_config) resolves the machine (discovering it when
// the config names none), builds the place list, maps workers to PUs with the
// bind policy and computes every worker's steal tiers, once, as plain data.
// The scheduler consumes this and never calls hwloc.
//
// Steal tiers of worker w, nearest first (empty tiers dropped, levels that
// hold the same workers merged into the nearer one):
//   core    - other workers on w's core (SMT siblings, oversubscription)
//   l3      - workers sharing w's L3 cache (core complex)
//   numa    - workers on w's NUMA node
//   package - workers in w's package
//   remote  - workers in other packages, one tier per NUMA distance from w's
//             node, nearest distance first
// Levels are ordered by how many workers they hold, so a machine whose NUMA
// node is smaller than its L3 (sub-NUMA clustering) gets numa before l3.
#pragma once

#include <string>
#include <vector>

#include <strata/topology/config.hpp>
#include <strata/topology/topology.hpp>

namespace strata {

struct worker_place {
  unsigned worker = 0;
  int pu_os_index = -1;
  int core = -1;
  int l3 = -1;
  int numa_node = -1;
  int package = -1;
  int numa_os_index = -1;  // the node number libnuma, numactl, numa_allocator and node_of() use
};

enum class tier_kind { core, l3, numa, package, remote };
const char* to_string(tier_kind k) noexcept;

struct steal_tier {
  tier_kind kind = tier_kind::core;
  int distance = 10;              // NUMA distance from the thief's node (largest in the tier)
  std::vector<unsigned> workers;  // ascending worker ids
};

using tier_list = std::vector<steal_tier>;

// Steal tiers for every worker of a placement on machine t.
std::vector<tier_list> compute_steal_tiers(const topology& t, const std::vector<worker_place>& places);

class placement_plan {
 public:
  static placement_plan compute(const placement_config& c);

  const strata::topology& machine() const noexcept { return m_machine; }
  const std::vector<worker_place>& workers() const noexcept { return m_workers; }
  const std::vector<tier_list>& tiers() const noexcept { return m_tiers; }
  const tier_list& tiers_of(unsigned worker) const;
  std::size_t num_workers() const noexcept { return m_workers.size(); }
  bind_policy bind() const noexcept { return m_bind; }
  const std::string& places() const noexcept { return m_places; }
  // True when workers will really be pinned: bind != none and the machine is this system.
  bool pins() const noexcept { return m_bind != bind_policy::none && m_machine.is_this_system(); }
  // What decided the worker count and what limited the CPUs, one line each.
  const std::vector<std::string>& notes() const noexcept { return m_notes; }

  // {"topology":..., "placement":[...], "tiers":[[[...],...],...], ...}
  std::string to_json() const;
  std::string placement_table() const;  // one line per worker
  std::string tiers_table() const;      // one line per worker
  std::string describe() const;         // everything strata-info prints

 private:
  explicit placement_plan(strata::topology t) : m_machine(std::move(t)) {}
  strata::topology m_machine;
  std::vector<worker_place> m_workers;
  std::vector<tier_list> m_tiers;
  std::vector<std::string> m_notes;
  bind_policy m_bind = bind_policy::close;
  std::string m_places;
};

}  // namespace strata
