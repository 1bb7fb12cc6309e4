// Timeline tracing: the rings and the trace-event JSON (design in
// <strata/runtime/ext/trace.hpp>).
#include <strata/runtime/ext/trace.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/core.hpp>

namespace strata::detail {
namespace {

std::size_t round_up_pow2(std::size_t n) noexcept {
  std::size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Tracers made in this process so far: "%n" in a path (a program, or
// strata-bench, that starts several runtimes keeps one file per runtime).
std::atomic<unsigned> g_tracers{0};

std::string expand_path(const std::string& path) {
  std::string out;
  const unsigned seq = g_tracers.fetch_add(1, std::memory_order_relaxed);  // relaxed: a unique number only
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'p') {
      out += std::to_string(getpid());
      ++i;
    } else if (path[i] == '%' && i + 1 < path.size() && path[i + 1] == 'n') {
      out += std::to_string(seq);
      ++i;
    } else {
      out += path[i];
    }
  }
  return out;
}

long os_tid() noexcept { return syscall(SYS_gettid); }

std::uint64_t steady_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The first tracer's (TSC, steady ns) pair; the TSC is used only when
// /proc/cpuinfo lists constant_tsc and nonstop_tsc.
struct clock_origin {
  std::uint64_t ticks = 0, ns = 0;
};
clock_origin& origin() {
  static clock_origin o = [] {
    clock_origin c;
#if defined(__x86_64__)
    if (std::FILE* f = std::fopen("/proc/cpuinfo", "r")) {
      char line[4096];
      bool constant = false, nonstop = false;
      while (std::fgets(line, sizeof line, f) != nullptr) {
        if (std::strncmp(line, "flags", 5) != 0) continue;
        constant = std::strstr(line, " constant_tsc") != nullptr;
        nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
        break;
      }
      std::fclose(f);
      if (constant && nonstop) {
        c.ticks = __builtin_ia32_rdtsc();
        c.ns = steady_ns();
        g_trace_tsc.store(true, std::memory_order_relaxed);  // relaxed: see g_trace_tsc
      }
    }
#endif
    return c;
  }();
  return o;
}

// Ticks to steady nanoseconds: the line through the origin and (now_ticks,
// now_ns); the identity without the TSC.
struct tick_scale {
  std::uint64_t t0 = 0, n0 = 0;
  double ns_per_tick = 1.0;
  bool tsc = false;
  std::uint64_t ns(std::uint64_t t) const noexcept {
    if (!tsc) return t;
    return t >= t0 ? n0 + static_cast<std::uint64_t>(static_cast<double>(t - t0) * ns_per_tick)
                   : n0 - static_cast<std::uint64_t>(static_cast<double>(t0 - t) * ns_per_tick);
  }
};

tick_scale current_scale() {
  tick_scale s;
  s.tsc = g_trace_tsc.load(std::memory_order_relaxed);  // relaxed: see g_trace_tsc
  if (!s.tsc) return s;
  const clock_origin& o = origin();
  const std::uint64_t t1 = __builtin_ia32_rdtsc(), n1 = steady_ns();
  s.t0 = o.ticks;
  s.n0 = o.ns;
  if (t1 > o.ticks && n1 > o.ns) s.ns_per_tick = static_cast<double>(n1 - o.ns) / static_cast<double>(t1 - o.ticks);
  return s;
}

// Microseconds since the runtime's start, as the trace-event format wants
// them, with the nanoseconds kept.
void put_us(std::FILE* f, std::uint64_t ns, std::uint64_t base) {
  const std::uint64_t d = ns > base ? ns - base : 0;
  std::fprintf(f, "%" PRIu64 ".%03" PRIu64, d / 1000, d % 1000);
}

// One event as a trace-event object (after a ",\n" written by the caller).
void put_event(std::FILE* f, const trace_event& e, long pid, long tid, std::uint64_t base) {
  auto head = [&](const char* name, const char* cat, const char* ph) {
    std::fprintf(f, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"%s\",\"pid\":%ld,\"tid\":%ld,\"ts\":", name, cat, ph,
                 pid, tid);
    put_us(f, e.ts, base);
  };
  auto dur = [&] {
    std::fprintf(f, ",\"dur\":");
    put_us(f, e.dur, 0);
  };
  switch (e.kind) {
    case trace_kind::task:
      head("task", "task", "X");
      dur();
      std::fputc('}', f);
      break;
    case trace_kind::park:
      head("parked", "idle", "X");
      dur();
      std::fputc('}', f);
      break;
    case trace_kind::actor_turn:
      head("actor turn", "actor", "X");
      dur();
      std::fprintf(f, ",\"args\":{\"actor\":\"0x%" PRIx64 "\",\"messages\":%u}}", e.id, e.count);
      break;
    case trace_kind::steal:
      head("steal", "steal", "i");
      std::fprintf(f, ",\"s\":\"t\",\"args\":{\"victim\":%u,\"tier\":%u,\"kind\":\"%s\",\"tasks\":%u}}", e.peer,
                   e.small & 15u, to_string(static_cast<tier_kind>(e.small >> 4)), e.count);
      break;
    case trace_kind::wake:
      head("wake", "idle", "i");
      std::fprintf(f, ",\"s\":\"t\",\"args\":{\"worker\":%u}}", e.peer);
      break;
    case trace_kind::message:
      head(e.id != 0 ? "actor message" : "task to worker", "message", "i");
      std::fprintf(f, ",\"s\":\"t\",\"args\":{\"to_worker\":%u,\"actor\":\"0x%" PRIx64 "\"}}", e.peer, e.id);
      break;
    case trace_kind::mpi_send:
    case trace_kind::mpi_recv:
      head(e.kind == trace_kind::mpi_send ? "mpi send" : "mpi recv", "mpi", "i");
      std::fprintf(f, ",\"s\":\"t\",\"args\":{\"%s\":%u,\"bytes\":%" PRIu64 ",\"items\":%u}}",
                   e.kind == trace_kind::mpi_send ? "to_rank" : "from_rank", e.peer, e.dur, e.count);
      break;
  }
}

bool is_span(trace_kind k) noexcept {
  return k == trace_kind::task || k == trace_kind::park || k == trace_kind::actor_turn;
}

void put_ring(std::FILE* f, const trace_ring& r, long pid, long tid, std::uint64_t base, const tick_scale& scale,
              bool* first) {
  std::vector<trace_event> ev = r.events();
  for (auto& e : ev) {
    // A span's end is converted, not its length: the conversion is
    // monotonic, so spans that nest in ticks nest in nanoseconds.
    const std::uint64_t start = scale.ns(e.ts);
    if (is_span(e.kind)) e.dur = scale.ns(e.ts + e.dur) - start;
    e.ts = start;
  }
  // Spans are recorded when they end: order by start (outer span first when
  // two start together), so that every thread's timestamps are monotonic.
  std::stable_sort(ev.begin(), ev.end(), [](const trace_event& a, const trace_event& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
  });
  std::fprintf(f, "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,\"args\":{\"name\":\"%s\"}}",
               *first ? "" : ",\n", pid, tid, r.name().c_str());
  std::fprintf(f,
               ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%ld,\"tid\":%ld,"
               "\"args\":{\"sort_index\":%ld}}",
               pid, tid, tid);
  *first = false;
  for (const auto& e : ev) {
    std::fputs(",\n", f);
    put_event(f, e, pid, tid, base);
  }
}

thread_local std::uint64_t t_trace_runtime = 0;  // runtime_core::id of the cached ring
thread_local trace_ring* t_trace_ring = nullptr;

}  // namespace

std::atomic<bool> g_trace_tsc{false};

trace_ring::trace_ring(std::size_t capacity, long tid, std::string name)
    : m_events(new trace_event[round_up_pow2(capacity)]),
      m_mask(round_up_pow2(capacity) - 1),
      m_tid(tid),
      m_name(std::move(name)) {}

std::vector<trace_event> trace_ring::events() const {
  const std::uint64_t cap = m_mask + 1;
  const std::uint64_t first = m_head > cap ? m_head - cap : 0;
  std::vector<trace_event> out;
  out.reserve(static_cast<std::size_t>(m_head - first));
  for (std::uint64_t i = first; i < m_head; ++i) out.push_back(m_events[i & m_mask]);
  return out;
}

tracer::tracer(const std::string& path, std::size_t events_per_thread)
    : m_path(expand_path(path)), m_capacity(events_per_thread), m_file(std::fopen(m_path.c_str(), "w")) {
  (void)origin();  // decides the clock before any ring records
  if (m_file == nullptr) {
    throw config_error("strata: STRATA_TRACE (config.trace_file) '" + path + "': cannot open '" + m_path +
                       "' for writing: " + std::strerror(errno) +
                       "; accepted: a writable file path (%p: the pid, %n: the runtime's number in the process)");
  }
}

tracer::~tracer() {
  if (m_file != nullptr) std::fclose(m_file);
}

trace_ring* tracer::add_worker(unsigned index, std::string name) {
  if (m_workers.size() <= index) m_workers.resize(index + 1);
  m_workers[index] = std::make_unique<trace_ring>(m_capacity, static_cast<long>(index), std::move(name));
  return m_workers[index].get();
}

trace_ring* tracer::worker_ring(unsigned index) const noexcept {
  return index < m_workers.size() ? m_workers[index].get() : nullptr;
}

trace_ring* tracer::thread_ring(const char* name) {
  const long tid = os_tid();
  std::lock_guard lock(m_mutex);
  for (auto& r : m_threads) {
    if (r->tid() == tid) return r.get();
  }
  std::string n = name != nullptr ? std::string(name) + " (thread " + std::to_string(tid) + ")"
                                  : "thread " + std::to_string(tid);
  m_threads.push_back(std::make_unique<trace_ring>(m_capacity, tid, std::move(n)));
  return m_threads.back().get();
}

void tracer::write(const runtime_core& rt) noexcept {
  if (m_file == nullptr) return;
  std::FILE* f = m_file;
  m_file = nullptr;
  const long pid = getpid();
  const std::uint64_t base = rt.start_ns;
  const tick_scale scale = current_scale();
  std::fprintf(f, "{\"traceEvents\":[\n");
  bool first = true;
  std::uint64_t dropped = 0;
  std::lock_guard lock(m_mutex);
  for (const auto& r : m_workers) {
    if (r == nullptr) continue;
    put_ring(f, *r, pid, r->tid(), base, scale, &first);
    dropped += r->dropped();
  }
  for (const auto& r : m_threads) {
    put_ring(f, *r, pid, r->tid(), base, scale, &first);
    dropped += r->dropped();
  }
  std::fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%ld,\"tid\":0,\"args\":{\"name\":\"strata "
               "(pid %ld, %zu workers)\"}}",
               pid, pid, rt.workers.size());
  std::fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"strata\",\"workers\":%zu,"
               "\"events_per_thread\":%zu,\"dropped_events\":%" PRIu64 ",\"dropped_by_thread\":{",
               rt.workers.size(), round_up_pow2(m_capacity), dropped);
  bool comma = false;
  for (const auto* list : {&m_workers, &m_threads}) {
    for (const auto& r : *list) {
      if (r == nullptr) continue;
      std::fprintf(f, "%s\"%ld\":%" PRIu64, comma ? "," : "", r->tid(), r->dropped());
      comma = true;
    }
  }
  std::fprintf(f, "}}}\n");
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "strata: STRATA_TRACE: writing '%s' failed: %s\n", m_path.c_str(), std::strerror(errno));
  }
}

trace_ring* trace_here(runtime_core& rt, const char* name) noexcept {
  if (rt.trace == nullptr) return nullptr;
  if (worker* w = current_worker(); w != nullptr && w->rt == &rt) return w->trace;
  if (t_trace_runtime == rt.id) return t_trace_ring;
  try {
    trace_ring* r = rt.trace->thread_ring(name);
    t_trace_runtime = rt.id;
    t_trace_ring = r;
    return r;
  } catch (...) {
    return nullptr;  // out of memory for a ring: this thread goes untraced
  }
}

}  // namespace strata::detail
