// topology::to_json() and topology::describe(): the machine as JSON and as an
// lstopo-like tree with the distance matrix.
#include <strata/topology/topology.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "topology_json.hpp"

namespace strata {
namespace {

std::string mib(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
  }
  return buf;
}

}  // namespace

namespace detail {

nlohmann::ordered_json topology_json(const topology& t) {
  using nlohmann::ordered_json;
  ordered_json packages = ordered_json::array();
  for (const auto& p : t.packages()) {
    packages.push_back({{"id", p.id}, {"os_index", p.os_index}, {"numa_nodes", p.numa_nodes}, {"cores", p.cores}});
  }
  ordered_json numa_nodes = ordered_json::array();
  for (const auto& n : t.numa_nodes()) {
    numa_nodes.push_back(
        {{"id", n.id}, {"os_index", n.os_index}, {"memory_bytes", n.memory_bytes}, {"cores", n.cores}});
  }
  ordered_json l3_groups = ordered_json::array();
  for (const auto& l : t.l3_groups()) {
    l3_groups.push_back({{"id", l.id}, {"size_bytes", l.size_bytes}, {"cores", l.cores}});
  }
  ordered_json cores = ordered_json::array();
  for (const auto& c : t.cores()) {
    cores.push_back(
        {{"id", c.id}, {"pus", c.pus}, {"l3", c.l3}, {"numa_node", c.numa_node}, {"package", c.package}});
  }
  ordered_json pus = ordered_json::array();
  for (const auto& p : t.pus()) {
    pus.push_back({{"os_index", p.os_index},
                   {"logical", p.logical},
                   {"core", p.core},
                   {"l3", p.l3},
                   {"numa_node", p.numa_node},
                   {"package", p.package}});
  }
  ordered_json distances = ordered_json::array();
  const int n = static_cast<int>(t.num_numa_nodes());
  for (int a = 0; a < n; ++a) {
    ordered_json row = ordered_json::array();
    for (int b = 0; b < n; ++b) row.push_back(t.numa_distance(a, b));
    distances.push_back(std::move(row));
  }
  const cpu_limits& l = t.limits();
  ordered_json j;
  j["source"] = t.source();
  j["this_system"] = t.is_this_system();
  j["packages"] = std::move(packages);
  j["numa_nodes"] = std::move(numa_nodes);
  j["l3_groups"] = std::move(l3_groups);
  j["cores"] = std::move(cores);
  j["pus"] = std::move(pus);
  j["distances"] = std::move(distances);
  j["distances_source"] = t.distances_from_hwloc() ? "hwloc" : "default (10 local, 20 remote)";
  j["limits"] = {{"machine_pus", format_cpu_list(l.machine_pus)},
                 {"allowed_pus", format_cpu_list(l.allowed_pus)},
                 {"bound_pus", format_cpu_list(l.bound_pus)},
                 {"usable_pus", format_cpu_list(l.usable_pus)},
                 {"machine_numa_nodes", format_cpu_list(l.machine_numa_nodes)},
                 {"allowed_numa_nodes", format_cpu_list(l.allowed_numa_nodes)}};
  return j;
}

}  // namespace detail

std::string topology::to_json() const { return detail::json_text(detail::topology_json(*this)); }

std::string topology::describe() const {
  std::ostringstream o;
  o << "Machine (" << source() << (is_this_system() ? "" : ", not this system: no binding") << ")\n";
  o << "  " << num_packages() << " package(s), " << num_numa_nodes() << " NUMA node(s), " << num_l3()
    << " L3 group(s), " << num_cores() << " core(s), " << num_pus() << " PU(s)\n";
  // The cores of package `pkg` whose node `numa` (-1: any node outside the
  // package) they belong to, with their L3 groups, at `indent`.
  const auto print_cores = [&](const package_info& pkg, int numa, const char* indent) {
    int last_l3 = -2;
    for (int cid : pkg.cores) {
      const auto& c = cores()[static_cast<std::size_t>(cid)];
      const bool in_pkg_node =
          std::find(pkg.numa_nodes.begin(), pkg.numa_nodes.end(), c.numa_node) != pkg.numa_nodes.end();
      if (numa >= 0 ? c.numa_node != numa : in_pkg_node) continue;
      if (c.l3 != last_l3) {
        last_l3 = c.l3;
        if (c.l3 >= 0) {
          o << indent << "L3 " << c.l3 << " (" << mib(l3_groups()[static_cast<std::size_t>(c.l3)].size_bytes)
            << ")\n";
        }
      }
      o << indent << "  Core " << c.id << ": PU";
      for (int pu : c.pus) o << " P#" << pu;
      o << "\n";
    }
  };
  std::vector<bool> in_package(num_numa_nodes(), false);
  for (const auto& p : packages()) {
    o << "  Package " << p.id << " (P#" << p.os_index << ")\n";
    for (int nid : p.numa_nodes) {
      const auto& n = numa_nodes()[static_cast<std::size_t>(nid)];
      in_package[static_cast<std::size_t>(nid)] = true;
      o << "    NUMANode " << n.id << " (P#" << n.os_index << ", " << mib(n.memory_bytes) << ")"
        << (n.cores.empty() ? " memory only" : "") << "\n";
      print_cores(p, nid, "      ");
    }
    print_cores(p, -1, "    ");  // cores whose node spans packages (listed below)
  }
  for (const auto& n : numa_nodes()) {
    if (in_package[static_cast<std::size_t>(n.id)]) continue;
    o << "  NUMANode " << n.id << " (P#" << n.os_index << ", " << mib(n.memory_bytes) << ")";
    if (n.cores.empty()) {
      o << " memory only\n";
    } else {
      std::vector<int> pk;
      for (int cid : n.cores) pk.push_back(cores()[static_cast<std::size_t>(cid)].package);
      o << " spans packages " << format_cpu_list(pk) << ": cores " << format_cpu_list(n.cores) << "\n";
    }
  }
  const int n = static_cast<int>(num_numa_nodes());
  o << "NUMA distances (" << (distances_from_hwloc() ? "from hwloc" : "default: 10 local, 20 remote") << "):\n     ";
  for (int b = 0; b < n; ++b) o << (b < 10 ? "   " : "  ") << b;
  o << "\n";
  for (int a = 0; a < n; ++a) {
    o << "  " << (a < 10 ? " " : "") << a << " ";
    for (int b = 0; b < n; ++b) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%4d", numa_distance(a, b));
      o << buf;
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace strata
