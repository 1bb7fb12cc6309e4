// numa_system: what this machine lets numa_alloc do, found once.
//
// libnuma answers which nodes exist and which the process may use (cgroup
// cpusets, numactl --membind, SLURM's memory binding all show up in
// mems_allowed); a one-page mbind probe answers whether the kernel binds at
// all (containers may refuse it with EPERM, kernels without NUMA with
// ENOSYS). Everything here is immutable after the first call.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <strata/numa_alloc/memory.hpp>

namespace strata::numa_detail {

struct numa_system {
  bool numa = false;      // libnuma: the kernel has NUMA support
  bool binding = false;   // mbind works here
  std::string no_binding_reason;  // why binding is false
  int max_node = 0;       // highest node index of the machine
  std::vector<int> allowed;       // nodes the process may allocate on, ascending
  std::vector<bool> is_allowed;   // indexed by node, size max_node + 1
  std::vector<int> node_of_cpu;   // OS CPU index -> node (0 when unknown)
};

// The facts, computed on first use (thread-safe).
const numa_system& system() noexcept;

// The node of the CPU the calling thread runs on now.
int current_node() noexcept;
// The calling thread stays on `node` from now on (false: not an allowed node).
bool set_node_of_thread(int node) noexcept;

// Binds [p, p + len) (page aligned, untouched) to the placement (node,
// interleaved); unbound and local (already resolved) placements are no-ops.
// Returns 0 or an errno value. Never called when binding is false.
int bind_range(void* p, std::size_t len, memory_placement where) noexcept;

// Prints one line to stderr the first time binding was wanted but is not
// available (reason: nullptr for the machine's, found at start).
void warn_no_binding_once(const char* reason = nullptr) noexcept;

// "node 1 does not exist on this machine; allowed nodes: 0,1": empty when fine.
std::string check_node(int node);

}  // namespace strata::numa_detail
