// strata::topology: the machine strata runs on, as plain data.
//
// Discovery goes through hwloc once; afterwards every question (which PUs,
// which cores share an L3, which NUMA node a core belongs to, how far two
// nodes are) is answered from vectors, so the scheduler never calls hwloc.
// A topology is immutable and cheap to copy (shared state).
//
// Numbering: packages, NUMA nodes, L3 groups and cores use strata ids, which
// are hwloc's logical indices among the usable objects (0..n-1 in tree
// order). PUs are named by their OS index (what taskset, numactl, OMP_PLACES
// and sched_getcpu use) and also carry hwloc's logical index.
//
// Example:
//   auto t = strata::topology::synthetic("pack:2 numa:2 l3:1 core:4 pu:2");
//   t.num_cores();            // 16
//   t.numa_distance(0, 3);    // 20 (no matrix in a synthetic machine: Linux's default)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <strata/topology/error.hpp>

namespace strata {

namespace detail {
struct topology_data;
}

struct pu_info {
  int os_index = -1;  // P# (sched_getcpu, taskset)
  int logical = -1;   // L# in hwloc's tree order
  int core = -1;      // strata core id
  int l3 = -1;        // strata L3 group id, -1 when the machine has no L3
  int numa_node = -1; // strata NUMA node id
  int package = -1;   // strata package id
};

struct core_info {
  int id = -1;
  int os_index = -1;
  std::vector<int> pus;  // OS indices of its usable PUs, SMT siblings in logical order
  int l3 = -1;
  int numa_node = -1;
  int package = -1;
};

struct l3_info {
  int id = -1;
  std::uint64_t size_bytes = 0;
  std::vector<int> cores;
};

struct numa_info {
  int id = -1;
  int os_index = -1;  // the node number libnuma, numactl and move_pages use
  std::uint64_t memory_bytes = 0;
  std::vector<int> cores;  // empty for memory-only nodes
};

struct package_info {
  int id = -1;
  int os_index = -1;
  std::vector<int> cores;
  std::vector<int> numa_nodes;
};

// What limited the CPUs strata may use. Filled by discover(); for synthetic
// and XML machines only the description's own allowed set applies.
struct cpu_limits {
  std::vector<int> machine_pus;  // every PU of the machine
  std::vector<int> allowed_pus;  // allowed by the OS (cgroup cpuset), or by the XML file
  std::vector<int> bound_pus;    // the process binding (taskset, srun --cpu-bind, mpirun --bind-to)
  std::vector<int> usable_pus;   // allowed AND bound: what strata places workers on
  std::vector<int> machine_numa_nodes;  // OS indices of every NUMA node of the machine
  std::vector<int> allowed_numa_nodes;  // allowed by the OS (cgroup cpuset.mems) or the XML file;
                                        // the others, and packages left with neither, are dropped
};

class topology {
 public:
  // This machine, restricted to the allowed cpuset AND the process binding.
  // Honours HWLOC_XMLFILE / HWLOC_SYNTHETIC but throws config_error when hwloc
  // silently fell back to the real machine because the file was unusable.
  static topology discover();
  // A machine described in hwloc's synthetic syntax ("pack:2 numa:2 core:4 pu:2").
  // config_error for a description hwloc refuses, and before hwloc sees it
  // for one it would take seconds to build: over 16384 PUs, a level of over
  // 1024 objects under one parent, or over 2^21 for the sum over levels of
  // objects times their count.
  static topology synthetic(std::string_view description);
  // A machine exported by lstopo (.xml); its allowed cpuset is honoured.
  static topology from_xml(const std::string& path);

  // True only for a topology discovered on this machine: binding is then
  // real. False for synthetic and XML machines: binding is skipped, never faked.
  bool is_this_system() const noexcept;

  std::size_t num_packages() const noexcept;
  std::size_t num_numa_nodes() const noexcept;
  std::size_t num_l3() const noexcept;
  std::size_t num_cores() const noexcept;
  std::size_t num_pus() const noexcept;

  // ACPI-style distance between NUMA nodes a and b (strata ids), 10 = local.
  // Throws config_error for a node that does not exist.
  int numa_distance(int a, int b) const;
  // True when the matrix came from hwloc (ACPI SLIT, XML); false when strata
  // filled in Linux's default (10 local, 20 remote).
  bool distances_from_hwloc() const noexcept;

  const std::vector<pu_info>& pus() const noexcept;
  const std::vector<core_info>& cores() const noexcept;
  const std::vector<l3_info>& l3_groups() const noexcept;
  const std::vector<numa_info>& numa_nodes() const noexcept;
  const std::vector<package_info>& packages() const noexcept;
  const cpu_limits& limits() const noexcept;
  // The usable PU with this OS index, or nullptr.
  const pu_info* find_pu(int os_index) const noexcept;

  // Where the description came from: "this system", "synthetic: ...", "xml: ...".
  const std::string& source() const noexcept;
  std::string to_json() const;   // one JSON object
  std::string describe() const;  // lstopo-like tree plus the distance matrix

  // Pin the calling thread to one PU. Returns false without doing anything
  // when the topology is not this system; throws config_error when the
  // operating system refuses (the message carries errno's text).
  bool bind_current_thread(int pu_os_index) const;

 private:
  explicit topology(std::shared_ptr<const detail::topology_data> data);
  std::shared_ptr<const detail::topology_data> m_data;
};

// Render a list of OS indices compactly: {0,1,2,3,8} -> "0-3,8".
std::string format_cpu_list(const std::vector<int>& pus);

}  // namespace strata
