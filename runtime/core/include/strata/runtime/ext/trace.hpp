// Timeline tracing (STRATA_TRACE=file.json): what each worker and helper
// thread did, when, as Chrome/Perfetto trace-event JSON written at shutdown.
//
// Recording. Every worker has a ring of fixed capacity (trace_events per
// thread, STRATA_TRACE_EVENTS), written by its own thread only: a record is
// a clock read and a 32-byte store, no atomic, no lock. The clock is the
// TSC where the CPU says it is constant and does not stop (11 ns a read
// here, against 26 ns for clock_gettime), converted to nanoseconds when the
// file is written from two (TSC, steady clock) pairs, at the first tracer's
// start and at the write; elsewhere it is the steady clock itself. A full ring
// overwrites its oldest events and counts them dropped (the file says how
// many per thread). Threads that are not workers of the runtime (the main
// thread submitting, the MPI bridge's progress thread, a thread waking a
// worker) get a ring of their own on their first event, created under the
// tracer's mutex and found again by their kernel thread id; a thread caches
// its ring for the last runtime it traced in (keyed by runtime_core::id).
//
// Reading. The rings are read only by tracer::write, called by the runtime
// after every worker thread has been joined (and every run_worker host has
// left): the joins order each worker's stores before the reads. A helper
// thread must have stopped recording by then: the MPI session, which owns
// the only such thread, ends before its runtime (a session outliving its
// runtime is a usage error already).
//
// Off. runtime_core::trace is null and every worker's `trace` is null; the
// task path pays one load and one never-taken branch per task (run_task),
// the other record sites (a steal, a park, a wake, an actor turn, a message
// to another worker, an MPI buffer) sit on paths that cost far more.
//
// What is recorded, as trace events: task spans ("X": tasks run through
// run_task; the inline halves of parallel_invoke are part of their caller's
// span), steals (instant, with victim, tier, tier kind and tasks taken),
// parks (the span a worker slept), wakes (instant, on the waking thread,
// naming the woken worker), actor turns (span, with the actor's address and
// messages handled), frames sent to another worker's inbox (instant: actor
// messages and submit_on tasks), MPI bridge buffers sent and received
// (instant, peer, bytes, items).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strata::detail {

struct runtime_core;

enum class trace_kind : std::uint8_t { task, steal, park, wake, actor_turn, message, mpi_send, mpi_recv };

// One event. Fields by kind: spans (task, park, actor_turn) have `dur`;
// steal: peer = victim, count = tasks taken, small = tier index (low 4
// bits) and tier kind (high 4 bits); wake, message: peer = the worker; message, actor_turn: id = the
// actor's address bits (0: a task); actor_turn: count = messages handled;
// mpi_send, mpi_recv: peer = rank, dur = bytes, count = items.
struct trace_event {
  std::uint64_t ts;   // trace clock ticks (trace_now)
  std::uint64_t dur;  // ticks (spans) or bytes (MPI)
  std::uint64_t id;
  std::uint32_t peer;
  std::uint16_t count;  // saturates at 65535
  std::uint8_t small;
  trace_kind kind;
};

// True when trace_now reads the TSC (decided once, before the first ring
// exists; relaxed loads: the value never changes after that).
extern std::atomic<bool> g_trace_tsc;

inline std::uint64_t trace_now() noexcept {
#if defined(__x86_64__)
  if (g_trace_tsc.load(std::memory_order_relaxed)) return __builtin_ia32_rdtsc();
#endif
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

class trace_ring {
 public:
  // capacity: a power of two.
  trace_ring(std::size_t capacity, long tid, std::string name);
  void record(const trace_event& e) noexcept {
    m_events[m_head & m_mask] = e;
    ++m_head;
  }
  void span(trace_kind k, std::uint64_t start, std::uint64_t id = 0, std::uint64_t count = 0) noexcept {
    record({start, trace_now() - start, id, 0, saturate(count), 0, k});
  }
  void instant(trace_kind k, std::uint32_t peer, std::uint64_t id = 0, std::uint64_t count = 0,
               std::uint64_t bytes = 0, std::uint8_t small = 0) noexcept {
    record({trace_now(), bytes, id, peer, saturate(count), small, k});
  }

  long tid() const noexcept { return m_tid; }
  const std::string& name() const noexcept { return m_name; }
  // The events still held, oldest first, and how many were overwritten.
  std::vector<trace_event> events() const;
  std::uint64_t dropped() const noexcept { return m_head > m_mask + 1 ? m_head - (m_mask + 1) : 0; }

 private:
  static std::uint16_t saturate(std::uint64_t n) noexcept {
    return n > 0xffff ? std::uint16_t{0xffff} : static_cast<std::uint16_t>(n);
  }
  std::unique_ptr<trace_event[]> m_events;
  std::uint64_t m_mask;
  std::uint64_t m_head = 0;  // events recorded so far; written by the owning thread only
  long m_tid;
  std::string m_name;
};

class tracer {
 public:
  // Opens `path` now ("%p" in it becomes the process id, "%n" the number of
  // tracers made before this one in the process), so that a path
  // that cannot be written fails the runtime's start, naming STRATA_TRACE.
  tracer(const std::string& path, std::size_t events_per_thread);
  ~tracer();
  tracer(const tracer&) = delete;
  tracer& operator=(const tracer&) = delete;

  // A ring for worker `index` (made before the workers start).
  trace_ring* add_worker(unsigned index, std::string name);
  trace_ring* worker_ring(unsigned index) const noexcept;
  // The calling thread's ring (not a worker of this runtime): made on its
  // first event, named `name` (or "thread <tid>").
  trace_ring* thread_ring(const char* name);
  // Writes the file and closes it; later calls do nothing. The runtime calls
  // it once its workers are joined (see the design above).
  void write(const runtime_core& rt) noexcept;
  const std::string& path() const noexcept { return m_path; }

 private:
  std::string m_path;
  std::size_t m_capacity;
  std::FILE* m_file;
  std::mutex m_mutex;  // m_threads
  std::vector<std::unique_ptr<trace_ring>> m_workers;
  std::vector<std::unique_ptr<trace_ring>> m_threads;
};

// The calling thread's ring in rt, or nullptr when rt does not trace. A
// worker of rt gets its own ring; any other thread a ring of its own.
trace_ring* trace_here(runtime_core& rt, const char* name = nullptr) noexcept;

}  // namespace strata::detail
