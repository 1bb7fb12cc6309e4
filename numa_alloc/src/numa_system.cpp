// numa_system: libnuma queries and the mbind / move_pages system calls.
#include "numa_system.hpp"

#include <strata/topology/ext/fault.hpp>

#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace strata::numa_detail {
namespace {

constexpr std::size_t k_bits_per_word = 8 * sizeof(unsigned long);

numa_system discover() {
  numa_system s;
  s.numa = numa_available() >= 0;
  if (!s.numa) {
    s.max_node = 0;
    s.allowed = {0};
    s.is_allowed = {true};
    s.no_binding_reason = "the kernel has no NUMA support (libnuma: numa_available() < 0)";
    return s;
  }
  s.max_node = numa_max_node();
  s.is_allowed.assign(static_cast<std::size_t>(s.max_node) + 1, false);
  if (bitmask* mems = numa_get_mems_allowed()) {
    for (int n = 0; n <= s.max_node; ++n) {
      if (numa_bitmask_isbitset(mems, static_cast<unsigned>(n))) {
        s.allowed.push_back(n);
        s.is_allowed[static_cast<std::size_t>(n)] = true;
      }
    }
    numa_bitmask_free(mems);
  }
  if (s.allowed.empty()) {  // cannot happen on Linux; be safe
    s.allowed = {0};
    s.is_allowed[0] = true;
  }
  const int cpus = numa_num_configured_cpus();
  s.node_of_cpu.assign(cpus > 0 ? static_cast<std::size_t>(cpus) : 0, s.allowed.front());
  for (int c = 0; c < cpus; ++c) {
    const int n = numa_node_of_cpu(c);
    if (n >= 0) s.node_of_cpu[static_cast<std::size_t>(c)] = n;
  }
  // Probe: bind one fresh page to the first allowed node.
  const long page = sysconf(_SC_PAGESIZE);
  void* p = mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    s.no_binding_reason = std::string("mmap of a probe page failed: ") + std::strerror(errno);
    return s;
  }
  std::vector<unsigned long> mask(static_cast<std::size_t>(s.max_node) / k_bits_per_word + 1, 0);
  const auto first = static_cast<std::size_t>(s.allowed.front());
  mask[first / k_bits_per_word] |= 1ul << (first % k_bits_per_word);
  if (mbind(p, static_cast<unsigned long>(page), MPOL_BIND, mask.data(), mask.size() * k_bits_per_word, 0) == 0) {
    s.binding = true;
  } else {
    s.no_binding_reason = std::string("mbind refused: ") + std::strerror(errno);
  }
  munmap(p, static_cast<std::size_t>(page));
  return s;
}

std::atomic<bool> g_warned{false};  // one warning per process (exchange)

}  // namespace

const numa_system& system() noexcept {
  static const numa_system s = discover();
  return s;
}

namespace {
thread_local int t_thread_node = -1;  // set_thread_node: this thread stays on that node
}  // namespace

bool set_node_of_thread(int node) noexcept {
  const numa_system& s = system();
  if (node < 0 || static_cast<std::size_t>(node) >= s.is_allowed.size() || !s.is_allowed[static_cast<std::size_t>(node)]) {
    return false;
  }
  t_thread_node = node;
  return true;
}

int current_node() noexcept {
  if (t_thread_node >= 0) return t_thread_node;
  const numa_system& s = system();
  const int cpu = sched_getcpu();
  if (cpu < 0 || static_cast<std::size_t>(cpu) >= s.node_of_cpu.size()) return s.allowed.front();
  const int n = s.node_of_cpu[static_cast<std::size_t>(cpu)];
  return s.is_allowed[static_cast<std::size_t>(n)] ? n : s.allowed.front();
}

int bind_range(void* p, std::size_t len, memory_placement where) noexcept {
  const numa_system& s = system();
  std::vector<unsigned long> mask(static_cast<std::size_t>(s.max_node) / k_bits_per_word + 1, 0);
  int mode = 0;
  switch (where.how()) {
    case memory_placement::kind::node: {
      const auto n = static_cast<std::size_t>(where.node());
      mask[n / k_bits_per_word] |= 1ul << (n % k_bits_per_word);
      mode = MPOL_BIND;
      break;
    }
    case memory_placement::kind::interleaved:
      for (int n : s.allowed) {
        const auto u = static_cast<std::size_t>(n);
        mask[u / k_bits_per_word] |= 1ul << (u % k_bits_per_word);
      }
      mode = MPOL_INTERLEAVE;
      break;
    case memory_placement::kind::local:
    case memory_placement::kind::unbound:
      return 0;
  }
  if (const int e = fault::fail_here(fault::site::mbind); e != 0) return e;
  if (mbind(p, len, mode, mask.data(), mask.size() * k_bits_per_word, 0) != 0) return errno;
  return 0;
}

void warn_no_binding_once(const char* reason) noexcept {
  // relaxed: only the single warning depends on it.
  if (g_warned.exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr, "strata: NUMA binding is not available here (%s); numa_alloc hands out plain memory\n",
               reason != nullptr ? reason : system().no_binding_reason.c_str());
}

std::string check_node(int node) {
  const numa_system& s = system();
  if (node >= 0 && node <= s.max_node && s.is_allowed[static_cast<std::size_t>(node)]) return {};
  // Built by appending: GCC 12 warns (-Wrestrict, a false positive) on the
  // chain of operator+ once this function is inlined.
  std::string allowed;
  for (int n : s.allowed) {
    if (!allowed.empty()) allowed += ',';
    allowed += std::to_string(n);
  }
  std::string msg = "NUMA node ";
  msg += std::to_string(node);
  if (node < 0 || node > s.max_node) {
    msg += " does not exist on this machine (nodes 0-";
    msg += std::to_string(s.max_node);
    msg += ")";
  } else {
    msg += " is not allowed for this process (cgroup, numactl or SLURM memory binding)";
  }
  msg += "; allowed nodes: ";
  msg += allowed;
  return msg;
}

}  // namespace strata::numa_detail
