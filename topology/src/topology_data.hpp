// Internal: the shared, immutable state behind strata::topology. Owns the
// hwloc handle (kept only for thread binding) and the plain-data view.
#pragma once

#include <hwloc.h>

#include <string>
#include <vector>

#include <strata/topology/topology.hpp>

namespace strata::detail {

struct topology_data {
  topology_data() = default;
  topology_data(const topology_data&) = delete;
  topology_data& operator=(const topology_data&) = delete;
  ~topology_data() {
    if (handle != nullptr) hwloc_topology_destroy(handle);
  }

  hwloc_topology_t handle = nullptr;
  bool this_system = false;
  std::string source;

  std::vector<pu_info> pus;            // sorted by OS index
  std::vector<core_info> cores;
  std::vector<l3_info> l3_groups;
  std::vector<numa_info> numa_nodes;
  std::vector<package_info> packages;
  std::vector<int> distances;          // numa_nodes.size()^2, row-major
  bool distances_from_hwloc = false;
  cpu_limits limits;
};

}  // namespace strata::detail
