// topology::to_json() and topology::describe(): the machine as JSON and as an
// lstopo-like tree with the distance matrix.
#include <strata/topology/ext/json_writer.hpp>
#include <strata/topology/topology.hpp>

#include <cstdio>
#include <sstream>

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

std::string topology::to_json() const {
  json_writer w;
  w.begin_object();
  w.key("source"); w.value(source());
  w.key("this_system"); w.value(is_this_system());
  w.key("packages");
  w.begin_array();
  for (const auto& p : packages()) {
    w.begin_object();
    w.key("id"); w.value(p.id);
    w.key("os_index"); w.value(p.os_index);
    w.key("numa_nodes"); w.int_array(p.numa_nodes);
    w.key("cores"); w.int_array(p.cores);
    w.end_object();
  }
  w.end_array();
  w.key("numa_nodes");
  w.begin_array();
  for (const auto& n : numa_nodes()) {
    w.begin_object();
    w.key("id"); w.value(n.id);
    w.key("os_index"); w.value(n.os_index);
    w.key("memory_bytes"); w.value(static_cast<unsigned long long>(n.memory_bytes));
    w.key("cores"); w.int_array(n.cores);
    w.end_object();
  }
  w.end_array();
  w.key("l3_groups");
  w.begin_array();
  for (const auto& l : l3_groups()) {
    w.begin_object();
    w.key("id"); w.value(l.id);
    w.key("size_bytes"); w.value(static_cast<unsigned long long>(l.size_bytes));
    w.key("cores"); w.int_array(l.cores);
    w.end_object();
  }
  w.end_array();
  w.key("cores");
  w.begin_array();
  for (const auto& c : cores()) {
    w.begin_object();
    w.key("id"); w.value(c.id);
    w.key("pus"); w.int_array(c.pus);
    w.key("l3"); w.value(c.l3);
    w.key("numa_node"); w.value(c.numa_node);
    w.key("package"); w.value(c.package);
    w.end_object();
  }
  w.end_array();
  w.key("pus");
  w.begin_array();
  for (const auto& p : pus()) {
    w.begin_object();
    w.key("os_index"); w.value(p.os_index);
    w.key("logical"); w.value(p.logical);
    w.key("core"); w.value(p.core);
    w.key("l3"); w.value(p.l3);
    w.key("numa_node"); w.value(p.numa_node);
    w.key("package"); w.value(p.package);
    w.end_object();
  }
  w.end_array();
  w.key("distances");
  w.begin_array();
  const int n = static_cast<int>(num_numa_nodes());
  for (int a = 0; a < n; ++a) {
    w.begin_array();
    for (int b = 0; b < n; ++b) w.value(numa_distance(a, b));
    w.end_array();
  }
  w.end_array();
  w.key("distances_source"); w.value(distances_from_hwloc() ? "hwloc" : "default (10 local, 20 remote)");
  w.key("limits");
  w.begin_object();
  w.key("machine_pus"); w.value(format_cpu_list(limits().machine_pus));
  w.key("allowed_pus"); w.value(format_cpu_list(limits().allowed_pus));
  w.key("bound_pus"); w.value(format_cpu_list(limits().bound_pus));
  w.key("usable_pus"); w.value(format_cpu_list(limits().usable_pus));
  w.end_object();
  w.end_object();
  return w.str();
}

std::string topology::describe() const {
  std::ostringstream o;
  o << "Machine (" << source() << (is_this_system() ? "" : ", not this system: no binding") << ")\n";
  o << "  " << num_packages() << " package(s), " << num_numa_nodes() << " NUMA node(s), " << num_l3()
    << " L3 group(s), " << num_cores() << " core(s), " << num_pus() << " PU(s)\n";
  for (const auto& p : packages()) {
    o << "  Package " << p.id << " (P#" << p.os_index << ")\n";
    for (int nid : p.numa_nodes) {
      const auto& n = numa_nodes()[static_cast<std::size_t>(nid)];
      o << "    NUMANode " << n.id << " (P#" << n.os_index << ", " << mib(n.memory_bytes) << ")"
        << (n.cores.empty() ? " memory only" : "") << "\n";
      int last_l3 = -2;
      for (int cid : n.cores) {
        const auto& c = cores()[static_cast<std::size_t>(cid)];
        if (c.package != p.id) continue;
        if (c.l3 != last_l3) {
          last_l3 = c.l3;
          if (c.l3 >= 0) {
            o << "      L3 " << c.l3 << " (" << mib(l3_groups()[static_cast<std::size_t>(c.l3)].size_bytes) << ")\n";
          }
        }
        o << "        Core " << c.id << ": PU";
        for (int pu : c.pus) o << " P#" << pu;
        o << "\n";
      }
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
