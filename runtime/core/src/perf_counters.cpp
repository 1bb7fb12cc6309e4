// Per-worker perf_event counters (design in perf_counters.hpp).
#include "perf_counters.hpp"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <strata/runtime/stats.hpp>
#include <strata/topology/ext/fault.hpp>

namespace strata::detail {
namespace {

struct event {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};

constexpr event k_events[] = {
    {"context_switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu_migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"page_faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"llc_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
};

// One counting event on thread `tid`, user and kernel (user only when the
// kernel's perf_event_paranoid refuses kernel counting to this process).
int open_event(const event& e, int tid, int* err) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = e.type;
  attr.config = e.config;
  attr.disabled = 0;
  attr.inherit = 0;
  attr.exclude_hv = 1;
  for (int user_only = 0; user_only < 2; ++user_only) {
    attr.exclude_kernel = user_only != 0 ? 1u : 0u;
    if (const int injected = fault::fail_here(fault::site::perf_event_open); injected != 0) {
      *err = injected;
      return -1;
    }
    const long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) return static_cast<int>(fd);
    *err = errno;
    if (errno != EACCES && errno != EPERM) break;
  }
  return -1;
}

std::string why(int err, const event& e) {
  std::string s = std::strerror(err);
  if (e.type == PERF_TYPE_HARDWARE && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)) {
    s += ": no hardware PMU (a VM without PMU passthrough?)";
  } else if (err == EACCES || err == EPERM) {
    s += ": see /proc/sys/kernel/perf_event_paranoid";
  } else if (err == ENOSYS) {
    s += ": this kernel has no perf_event_open";
  }
  return s;
}

// Runtimes of the process that count now (profile regions read their
// thread's counters while it is not 0; relaxed: a region that misses a
// change only counts one entry more or less).
std::atomic<int> g_counting{0};

// The calling thread's own counters, for profile regions.
struct thread_counters {
  bool opened = false;
  int fds[std::size(k_events)];
  const char* names[std::size(k_events)];
  std::size_t n = 0;
  ~thread_counters() {
    for (std::size_t i = 0; i < n; ++i) close(fds[i]);
  }
};
thread_local thread_counters t_counters;

}  // namespace

bool region_counters_on() noexcept { return g_counting.load(std::memory_order_relaxed) != 0; }

std::size_t read_thread_counters(std::uint64_t* out, const char** names, std::size_t cap) noexcept {
  thread_counters& tc = t_counters;
  if (!tc.opened) {
    tc.opened = true;
    for (const auto& e : k_events) {
      int err = 0;
      const int fd = open_event(e, 0, &err);  // 0: the calling thread
      if (fd < 0) continue;
      tc.fds[tc.n] = fd;
      tc.names[tc.n] = e.name;
      ++tc.n;
    }
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < tc.n && k < cap; ++i) {
    std::uint64_t v = 0;
    if (read(tc.fds[i], &v, sizeof v) != static_cast<ssize_t>(sizeof v)) v = 0;
    out[k] = v;
    names[k] = tc.names[i];
    ++k;
  }
  return k;
}

perf_counters::perf_counters(runtime_core& rt) {
  constexpr std::size_t n_events = std::size(k_events);
  g_counting.fetch_add(1, std::memory_order_relaxed);  // relaxed: see g_counting
  m_fds.assign(rt.workers.size(), std::vector<int>(n_events, -1));
  if (rt.external_engine) {
    for (const auto& e : k_events) {
      m_unavailable.emplace_back(e.name, "engine::external: the threads that host the workers are not known at start");
    }
    return;
  }
  for (std::size_t k = 0; k < n_events; ++k) {
    for (std::size_t w = 0; w < rt.workers.size(); ++w) {
      int err = 0;
      m_fds[w][k] = open_event(k_events[k], rt.workers[w]->os_tid, &err);
      if (m_fds[w][k] < 0) {
        // Refused for one worker: the same for all (a kind of event the
        // kernel or the machine lacks); say so once.
        for (std::size_t v = 0; v < w; ++v) {
          close(m_fds[v][k]);
          m_fds[v][k] = -1;
        }
        m_unavailable.emplace_back(k_events[k].name, why(err, k_events[k]));
        break;
      }
    }
  }
}

perf_counters::~perf_counters() {
  g_counting.fetch_sub(1, std::memory_order_relaxed);  // relaxed: see g_counting
  for (auto& per_worker : m_fds) {
    for (int fd : per_worker) {
      if (fd >= 0) close(fd);
    }
  }
}

void perf_counters::add_stats(runtime_stats& s) const {
  for (std::size_t w = 0; w < m_fds.size() && w < s.workers.size(); ++w) {
    for (std::size_t k = 0; k < m_fds[w].size(); ++k) {
      if (m_fds[w][k] < 0) continue;
      std::uint64_t value = 0;
      if (read(m_fds[w][k], &value, sizeof value) != static_cast<ssize_t>(sizeof value)) continue;
      s.workers[w].set_counter(std::string("perf.") + k_events[k].name, value);
    }
  }
  s.unavailable_counters = m_unavailable;
}

void attach_perf_counters(runtime_core& rt) { subsystem_of<perf_counters>(rt); }

}  // namespace strata::detail
