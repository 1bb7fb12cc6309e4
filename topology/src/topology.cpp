// hwloc discovery and the plain-data view of a machine (see topology.hpp).
#include <strata/topology/topology.hpp>

#include <algorithm>
#include <fcntl.h>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <strata/topology/ext/fault.hpp>

#include "topology_data.hpp"

namespace strata {
namespace {

using data_ptr = std::shared_ptr<detail::topology_data>;

struct bitmap {
  hwloc_bitmap_t b = hwloc_bitmap_alloc();
  bitmap() = default;
  bitmap(const bitmap&) = delete;
  bitmap& operator=(const bitmap&) = delete;
  ~bitmap() { hwloc_bitmap_free(b); }
};

std::vector<int> to_list(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  if (set == nullptr || hwloc_bitmap_iszero(set)) return out;
  for (int i = hwloc_bitmap_first(set); i != -1; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

int ancestor_index(hwloc_obj_t obj, hwloc_obj_type_t type) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(nullptr, type, obj);
  return a != nullptr ? static_cast<int>(a->logical_index) : -1;
}

// Fills the plain-data view from a loaded and restricted hwloc topology.
// The topology is loaded with disallowed objects included (so the report can
// say what the cgroup removed) and restricted to the usable CPUs, which keeps
// every NUMA node that still holds memory. As hwloc does by default, the view
// leaves out NUMA nodes outside the allowed nodeset and packages left with no
// usable core and no allowed node; hwloc's logical indices are remapped.
// The PUs of `core` (itself when it is one), in logical order, by a walk of
// its subtree: searching the whole machine for the k-th PU inside its cpuset
// made extract quadratic (a synthetic machine of 8192 PUs took 6 s).
void pus_of(hwloc_obj_t core, hwloc_obj_t obj, std::vector<hwloc_obj_t>& out) {
  if (obj->type == HWLOC_OBJ_PU) {
    if (hwloc_bitmap_isincluded(obj->cpuset, core->cpuset)) out.push_back(obj);
    return;
  }
  for (hwloc_obj_t child = obj->first_child; child != nullptr; child = child->next_sibling) pus_of(core, child, out);
}

void extract(detail::topology_data& d) {
  hwloc_topology_t t = d.handle;
  hwloc_const_nodeset_t allowed_nodes = hwloc_topology_get_allowed_nodeset(t);

  const int n_pack = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
  const int n_numa_all = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  const int n_l3 = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_L3CACHE);
  int n_core = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  const int n_pu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  // A description without cores (e.g. "pack:2 pu:4") treats each PU as a core.
  const hwloc_obj_type_t core_type = n_core > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  if (n_core <= 0) n_core = n_pu;

  // hwloc logical index -> strata id, -1 where left out.
  std::vector<int> numa_id(static_cast<std::size_t>(std::max(n_numa_all, 0)), -1);
  std::vector<hwloc_obj_t> numa_obj;
  for (int i = 0; i < n_numa_all; ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (!hwloc_bitmap_isset(allowed_nodes, n->os_index)) continue;
    numa_id[static_cast<std::size_t>(i)] = static_cast<int>(numa_obj.size());
    numa_obj.push_back(n);
  }
  const int n_numa = static_cast<int>(numa_obj.size());
  std::vector<int> pack_id(static_cast<std::size_t>(std::max(n_pack, 0)), -1);
  for (int i = 0; i < n_pack; ++i) {
    hwloc_obj_t p = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    const bool has_core = hwloc_get_nbobjs_inside_cpuset_by_type(t, p->cpuset, core_type) > 0;
    const bool has_node = hwloc_bitmap_intersects(p->nodeset, allowed_nodes) != 0;
    if (!has_core && !has_node) continue;
    pack_id[static_cast<std::size_t>(i)] = static_cast<int>(d.packages.size());
    d.packages.push_back({static_cast<int>(d.packages.size()), static_cast<int>(p->os_index), {}, {}});
  }
  const auto package_of = [&](hwloc_obj_t obj) {
    const int a = ancestor_index(obj, HWLOC_OBJ_PACKAGE);
    return a >= 0 ? pack_id[static_cast<std::size_t>(a)] : -1;
  };
  if (d.packages.empty()) d.packages.push_back({0, 0, {}, {}});  // no package level: the machine is one package
  for (int i = 0; i < n_numa; ++i) {
    hwloc_obj_t n = numa_obj[static_cast<std::size_t>(i)];
    d.numa_nodes.push_back({i, static_cast<int>(n->os_index), n->attr->numanode.local_memory, {}});
    const int pk = n_pack > 0 ? package_of(n) : 0;
    if (pk >= 0) d.packages[static_cast<std::size_t>(pk)].numa_nodes.push_back(i);
  }
  for (int i = 0; i < n_l3; ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t, HWLOC_OBJ_L3CACHE, static_cast<unsigned>(i));
    d.l3_groups.push_back({i, c->attr->cache.size, {}});
  }

  std::vector<hwloc_obj_t> core_pus;
  for (int i = 0; i < n_core; ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(t, core_type, static_cast<unsigned>(i));
    core_info ci;
    ci.id = i;
    ci.os_index = static_cast<int>(c->os_index);
    ci.l3 = ancestor_index(c, HWLOC_OBJ_L3CACHE);
    ci.package = n_pack > 0 ? std::max(0, package_of(c)) : 0;
    // The first allowed NUMA node (logical order) whose CPUs include this
    // core; a core whose local nodes are all disallowed (cpuset.mems narrower
    // than cpuset.cpus) takes node 0, where the kernel will place its memory.
    for (int n = 0; n < n_numa && ci.numa_node < 0; ++n) {
      if (hwloc_bitmap_intersects(numa_obj[static_cast<std::size_t>(n)]->cpuset, c->cpuset)) ci.numa_node = n;
    }
    if (ci.numa_node < 0) ci.numa_node = 0;
    core_pus.clear();
    pus_of(c, c, core_pus);
    for (hwloc_obj_t pu : core_pus) {
      ci.pus.push_back(static_cast<int>(pu->os_index));
      d.pus.push_back({static_cast<int>(pu->os_index), static_cast<int>(pu->logical_index), i, ci.l3, ci.numa_node,
                       ci.package});
    }
    if (ci.l3 >= 0) d.l3_groups[static_cast<std::size_t>(ci.l3)].cores.push_back(i);
    if (!d.numa_nodes.empty()) d.numa_nodes[static_cast<std::size_t>(ci.numa_node)].cores.push_back(i);
    d.packages[static_cast<std::size_t>(ci.package)].cores.push_back(i);
    d.cores.push_back(std::move(ci));
  }
  std::sort(d.pus.begin(), d.pus.end(), [](const pu_info& a, const pu_info& b) { return a.os_index < b.os_index; });
  if (d.numa_nodes.empty()) {  // hwloc always reports one, but never trust a description
    d.numa_nodes.push_back({0, 0, 0, {}});
    for (const auto& c : d.cores) d.numa_nodes[0].cores.push_back(c.id);
    d.packages[0].numa_nodes.push_back(0);
  }

  // Distance matrix: hwloc's (ACPI SLIT or XML) when it covers every node,
  // else Linux's default for a machine without a SLIT.
  const std::size_t nn = d.numa_nodes.size();
  d.distances.assign(nn * nn, 20);
  for (std::size_t i = 0; i < nn; ++i) d.distances[i * nn + i] = 10;
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_type(t, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
      nr == 1) {
    std::vector<int> m(nn * nn, -1);
    for (unsigned i = 0; i < dist->nbobjs; ++i) {
      for (unsigned j = 0; j < dist->nbobjs; ++j) {
        const auto la = dist->objs[i]->logical_index, lb = dist->objs[j]->logical_index;
        if (la >= numa_id.size() || lb >= numa_id.size()) continue;
        const int a = numa_id[la], b = numa_id[lb];
        if (a >= 0 && b >= 0) {
          m[static_cast<std::size_t>(a) * nn + static_cast<std::size_t>(b)] =
              static_cast<int>(dist->values[i * dist->nbobjs + j]);
        }
      }
    }
    if (std::find(m.begin(), m.end(), -1) == m.end()) {
      d.distances = std::move(m);
      d.distances_from_hwloc = true;
    }
    hwloc_distances_release(t, dist);
  }
}

// Restricts the loaded topology to `usable` and extracts the data view.
void restrict_and_extract(detail::topology_data& d, hwloc_const_bitmap_t usable) {
  if (hwloc_bitmap_iszero(usable)) {
    throw config_error("strata: no usable CPU in " + d.source + " (allowed: " +
                       format_cpu_list(d.limits.allowed_pus) + ", process binding: " +
                       format_cpu_list(d.limits.bound_pus) + "): check taskset, cgroup cpuset or srun --cpu-bind");
  }
  if (hwloc_topology_restrict(d.handle, usable, 0) != 0) {
    throw config_error(std::string("strata: hwloc could not restrict the topology to the usable CPUs: ") +
                       std::strerror(errno));
  }
  d.limits.usable_pus = to_list(usable);
  d.limits.machine_numa_nodes = to_list(hwloc_topology_get_complete_nodeset(d.handle));
  d.limits.allowed_numa_nodes = to_list(hwloc_topology_get_allowed_nodeset(d.handle));
  extract(d);
}

data_ptr new_handle(std::string source) {
  auto d = std::make_shared<detail::topology_data>();
  d->source = std::move(source);
  if (hwloc_topology_init(&d->handle) != 0) throw config_error("strata: hwloc_topology_init failed");
  // Keep disallowed PUs during load so the report can say what the cgroup removed.
  hwloc_topology_set_flags(d->handle, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  return d;
}

// hwloc_topology_load through the fault seam: 0, or the errno it failed with.
int load(detail::topology_data& d) {
  if (const int e = fault::fail_here(fault::site::hwloc_load); e != 0) return e;
  return hwloc_topology_load(d.handle) == 0 ? 0 : (errno != 0 ? errno : EINVAL);
}

void load_or_throw(detail::topology_data& d, const std::string& what) {
  if (const int e = load(d); e != 0) {
    throw config_error("strata: hwloc could not load " + what + ": " + std::strerror(e));
  }
}

// Synthetic and XML machines: the description's allowed set is the limit;
// the binding of this process says nothing about that machine.
void finish_description(detail::topology_data& d) {
  d.limits.machine_pus = to_list(hwloc_topology_get_complete_cpuset(d.handle));
  d.limits.allowed_pus = to_list(hwloc_topology_get_allowed_cpuset(d.handle));
  d.limits.bound_pus = d.limits.allowed_pus;
  bitmap usable;
  hwloc_bitmap_copy(usable.b, hwloc_topology_get_allowed_cpuset(d.handle));
  restrict_and_extract(d, usable.b);
}

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0';
}

}  // namespace

topology::topology(std::shared_ptr<const detail::topology_data> data) : m_data(std::move(data)) {}

topology topology::discover() {
  // hwloc silently falls back to the real machine when HWLOC_XMLFILE or
  // HWLOC_SYNTHETIC name something unusable. Load them explicitly instead,
  // where a bad file or description is an error that names the variable.
  if (env_set("HWLOC_XMLFILE")) {
    const std::string path = std::getenv("HWLOC_XMLFILE");
    try {
      return from_xml(path);
    } catch (const config_error& e) {
      throw config_error(std::string("strata: HWLOC_XMLFILE='") + path + "' is unusable (hwloc alone would silently " +
                         "fall back to the real machine): " + e.reason());
    }
  }
  if (env_set("HWLOC_SYNTHETIC")) {
    const std::string desc = std::getenv("HWLOC_SYNTHETIC");
    try {
      return synthetic(desc);
    } catch (const config_error& e) {
      throw config_error(std::string("strata: HWLOC_SYNTHETIC='") + desc + "' is unusable (hwloc alone would " +
                         "silently fall back to the real machine): " + e.reason());
    }
  }
  auto d = new_handle("this system");
  load_or_throw(*d, "this machine");
  d->this_system = hwloc_topology_is_thissystem(d->handle) != 0;
  if (!d->this_system) {
    finish_description(*d);
    return topology{d};
  }

  d->limits.machine_pus = to_list(hwloc_topology_get_complete_cpuset(d->handle));
  d->limits.allowed_pus = to_list(hwloc_topology_get_allowed_cpuset(d->handle));
  bitmap bound;
  if (hwloc_get_cpubind(d->handle, bound.b, HWLOC_CPUBIND_PROCESS) != 0) {
    hwloc_bitmap_copy(bound.b, hwloc_topology_get_allowed_cpuset(d->handle));
  }
  d->limits.bound_pus = to_list(bound.b);
  bitmap usable;
  hwloc_bitmap_and(usable.b, bound.b, hwloc_topology_get_allowed_cpuset(d->handle));
  restrict_and_extract(*d, usable.b);
  return topology{d};
}

namespace {

// The PUs a synthetic description asks for: the product of its levels'
// counts ("pack:2 core:4 pu:2" = 16; a bare "8" is a level of 8), saturated.
// Attributes in parentheses and memory children in brackets carry no count
// here; a level whose count is not read is left for hwloc to judge. hwloc
// builds every object before it checks anything, so a description of 10^8
// PUs took minutes in hwloc (found by tests/fuzz/env_fuzz.cpp).
// More PUs than today's largest single-image nodes; past it strata's own
// placement and steal tiers take seconds (16384 PUs: 3.3 s for strata-info).
constexpr std::uint64_t k_max_synthetic_pus = 16384;
// hwloc inserts objects one by one, each insertion walking the siblings
// already under the parent it goes to (and comparing cpusets as wide as the
// machine). A level of N objects in groups of k under their parents costs
// about N·k steps: strata-info (release) took 1.7 s for "pack:4 numa:4
// core:256 pu:4" (1.1·10^6 steps), 4 s for "pack:8 core:512 pu:4"
// (2.2·10^6), 11 s for "pack:64 core:256 pu:1" (4.2·10^6), 17 s for
// "pack:16 core:1024 pu:1" and for "8527" (16.8·10^6 and 72.7·10^6), all of
// them within 16384 PUs; found by the env and topology fuzzers. The widest
// real level, cores of one package, is a few hundred.
constexpr std::uint64_t k_max_synthetic_arity = 1024;
constexpr std::uint64_t k_max_synthetic_steps = std::uint64_t{1} << 21;

struct synthetic_size {
  std::uint64_t pus = 1;     // the product of the levels' counts, saturated
  std::uint64_t widest = 0;  // the largest count of one level
  std::uint64_t steps = 0;   // the sum over levels of objects · count, saturated
};

std::uint64_t saturated_mul(std::uint64_t a, std::uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// Reads the counts the way hwloc 2.9's parser finds them
// (hwloc_backend_synthetic_init in topology-synthetic.c), so that no count
// hwloc would build escapes the limits above: a level starts after white
// space; a level that does not start with a digit is a type, and its count
// follows the first ':' after it, wherever that is (in "core(:4000" too:
// the '(' is no attribute there); the count is strtoul's, base 0 ("0x800"
// is 2048, "010" is 8); attributes in parentheses follow a count (or open
// the description) and end at the first ')'; a memory child in brackets
// ends at the first ']'. White space of any kind separates levels here
// ("4\n4096" is two levels), where hwloc 2.9 takes ' ' and '\n' and
// refuses the rest (tab, '\r'): counting more than hwloc would read refuses
// nothing it accepts. Where hwloc's parse
// would stop with an error, so does this one, with what it has counted.
synthetic_size measure_synthetic(const std::string& desc) {
  synthetic_size z;
  const char* pos = desc.c_str();
  const auto skip_past = [&pos](char close) {
    const char* at = std::strchr(pos, close);
    if (at == nullptr) return false;
    pos = at + 1;
    return true;
  };
  if (*pos == '(' && !skip_past(')')) return z;
  while (*pos != '\0') {
    while (std::isspace(static_cast<unsigned char>(*pos)) != 0) ++pos;
    if (*pos == '\0') break;
    if (*pos == '[') {
      if (!skip_past(']')) return z;
      continue;
    }
    if ((*pos < '0' || *pos > '9') && !skip_past(':')) return z;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(pos, &end, 0);  // ULLONG_MAX on overflow: saturated
    if (end == pos || n == 0) return z;
    z.pus = saturated_mul(z.pus, n);
    const std::uint64_t here = saturated_mul(z.pus, n);
    z.steps = z.steps > UINT64_MAX - here ? UINT64_MAX : z.steps + here;
    z.widest = std::max<std::uint64_t>(z.widest, n);
    pos = end;
    if (*pos == '(' && !skip_past(')')) return z;
  }
  return z;
}

}  // namespace

topology topology::synthetic(std::string_view description) {
  const std::string desc(description);
  const char* accepted =
      "accepted: hwloc synthetic syntax, levels of type:count from the top, e.g. 'pack:2 numa:2 l3:1 core:4 pu:2'";
  if (desc.find_first_not_of(" \t") == std::string::npos) {
    throw config_error("strata: empty synthetic topology description; " + std::string(accepted));
  }
  const synthetic_size z = measure_synthetic(desc);
  if (z.pus > k_max_synthetic_pus) {
    throw config_error("strata: synthetic topology '" + desc + "' describes " + std::to_string(z.pus) +
                       " PUs; accepted: at most " + std::to_string(k_max_synthetic_pus) + " PUs");
  }
  if (z.widest > k_max_synthetic_arity) {
    throw config_error("strata: synthetic topology '" + desc + "' has a level of " + std::to_string(z.widest) +
                       " objects under one parent; accepted: at most " + std::to_string(k_max_synthetic_arity) +
                       " per level (split it: 'pack:4 core:512 pu:2', not 'core:2048 pu:2')");
  }
  if (z.steps > k_max_synthetic_steps) {
    throw config_error("strata: synthetic topology '" + desc + "' is too costly for hwloc to build: its levels' " +
                       "objects times their counts sum to " + std::to_string(z.steps) + "; accepted: at most " +
                       std::to_string(k_max_synthetic_steps) +
                       " (fewer children per parent and more levels: 'pack:4 numa:4 core:256 pu:4', not "
                       "'pack:64 core:256 pu:1')");
  }
  auto d = new_handle("synthetic: " + desc);
  if (hwloc_topology_set_synthetic(d->handle, desc.c_str()) != 0) {
    throw config_error("strata: invalid synthetic topology '" + desc + "'; " + accepted);
  }
  load_or_throw(*d, "synthetic topology '" + desc + "'");
  finish_description(*d);
  return topology{d};
}

namespace {

// hwloc's XML import trusts the file: a malformed export can crash it (hwloc
// 2.9 dereferences a null complete_cpuset when an object has a cpuset but
// no complete_cpuset; found by tests/fuzz/topology_fuzz.cpp). So the file is
// first loaded in a child process: a child killed by a signal means a file
// hwloc cannot read safely, reported as a config_error instead of taking the
// program down; a file the child could not parse is refused without the
// parent touching it (hwloc's failed import also leaks its parser's memory).
// Empty when the child loaded it (or no child could be made: then the parent
// loads it as before); else the reason.
std::string xml_refused_by_child(const std::string& path) {
  const pid_t pid = fork();
  if (pid < 0) return "";
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) dup2(null, 2);  // hwloc's (and a sanitizer's) complaints belong to the parent's error
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0) _exit(0);  // no memory: let the parent try and report
    hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);  // as new_handle
    const bool ok = hwloc_topology_set_xml(t, path.c_str()) == 0 && hwloc_topology_load(t) == 0;
    _exit(ok ? 0 : 3);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return std::string("hwloc crashed reading it (signal ") + std::to_string(WTERMSIG(status)) + ", " +
           strsignal(WTERMSIG(status)) + ")";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return "hwloc could not parse it";
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return "hwloc failed reading it (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  }
  return "";
}

}  // namespace

topology topology::from_xml(const std::string& path) {
  std::error_code ec;
  if (path.empty()) throw config_error("strata: empty XML topology path; accepted: a file exported by lstopo --of xml");
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw config_error("strata: XML topology file '" + path +
                       "' does not exist or is not a regular file; accepted: a file exported by lstopo --of xml");
  }
  if (!std::ifstream(path).good()) throw config_error("strata: XML topology file '" + path + "' is not readable");
  if (const std::string why = xml_refused_by_child(path); !why.empty()) {
    throw config_error("strata: malformed XML topology '" + path + "': " + why +
                       "; accepted: a file exported by lstopo --of xml");
  }
  auto d = new_handle("xml: " + path);
  int e = fault::fail_here(fault::site::hwloc_xml);
  if (e == 0 && hwloc_topology_set_xml(d->handle, path.c_str()) != 0) e = errno != 0 ? errno : EINVAL;
  if (e != 0) throw config_error("strata: hwloc rejected XML topology '" + path + "': " + std::strerror(e));
  // The child parsed this file, so a failure here is the system's (memory), not the file's.
  if (e = load(*d); e != 0) {
    throw config_error("strata: hwloc could not load XML topology '" + path + "': " + std::strerror(e) +
                       "; accepted: a file exported by lstopo --of xml");
  }
  finish_description(*d);
  return topology{d};
}

bool topology::is_this_system() const noexcept { return m_data->this_system; }
std::size_t topology::num_packages() const noexcept { return m_data->packages.size(); }
std::size_t topology::num_numa_nodes() const noexcept { return m_data->numa_nodes.size(); }
std::size_t topology::num_l3() const noexcept { return m_data->l3_groups.size(); }
std::size_t topology::num_cores() const noexcept { return m_data->cores.size(); }
std::size_t topology::num_pus() const noexcept { return m_data->pus.size(); }
bool topology::distances_from_hwloc() const noexcept { return m_data->distances_from_hwloc; }
const std::vector<pu_info>& topology::pus() const noexcept { return m_data->pus; }
const std::vector<core_info>& topology::cores() const noexcept { return m_data->cores; }
const std::vector<l3_info>& topology::l3_groups() const noexcept { return m_data->l3_groups; }
const std::vector<numa_info>& topology::numa_nodes() const noexcept { return m_data->numa_nodes; }
const std::vector<package_info>& topology::packages() const noexcept { return m_data->packages; }
const cpu_limits& topology::limits() const noexcept { return m_data->limits; }
const std::string& topology::source() const noexcept { return m_data->source; }

int topology::numa_distance(int a, int b) const {
  const int n = static_cast<int>(m_data->numa_nodes.size());
  if (a < 0 || a >= n || b < 0 || b >= n) {
    throw config_error("strata: numa_distance(" + std::to_string(a) + ", " + std::to_string(b) +
                       "): this machine has NUMA nodes 0.." + std::to_string(n - 1));
  }
  return m_data->distances[static_cast<std::size_t>(a) * static_cast<std::size_t>(n) + static_cast<std::size_t>(b)];
}

const pu_info* topology::find_pu(int os_index) const noexcept {
  const auto& p = m_data->pus;
  auto it = std::lower_bound(p.begin(), p.end(), os_index, [](const pu_info& x, int v) { return x.os_index < v; });
  return it != p.end() && it->os_index == os_index ? &*it : nullptr;
}

bool topology::bind_current_thread(int pu_os_index) const {
  if (!m_data->this_system) return false;
  if (find_pu(pu_os_index) == nullptr) {
    throw config_error("strata: cannot bind to PU " + std::to_string(pu_os_index) + ": not a usable PU (usable: " +
                       format_cpu_list(m_data->limits.usable_pus) + ")");
  }
  bitmap set;
  hwloc_bitmap_only(set.b, static_cast<unsigned>(pu_os_index));
  if (hwloc_set_cpubind(m_data->handle, set.b, HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT) != 0) {
    throw config_error("strata: binding a thread to PU " + std::to_string(pu_os_index) +
                       " failed: " + std::strerror(errno));
  }
  return true;
}

std::string format_cpu_list(const std::vector<int>& pus) {
  std::vector<int> v = pus;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j > i) out += '-' + std::to_string(v[j]);
    i = j + 1;
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace strata
