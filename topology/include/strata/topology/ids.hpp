// Strong ids for targets: a worker of a runtime and a NUMA node (strata ids,
// see topology.hpp).
#pragma once

namespace strata {

struct worker_id {
  unsigned value = 0;
  friend bool operator==(worker_id, worker_id) = default;
};

struct numa_node {
  int value = 0;
  friend bool operator==(numa_node, numa_node) = default;
};

}  // namespace strata
