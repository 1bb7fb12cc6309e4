// The worker loop: run what find_work finds, wait in the idle phase when
// there is nothing (parking.cpp), leave when the runtime stops. Waits on a
// worker (task_group::wait, future::get) run the same search while their
// condition does not hold (help_until), so a worker never blocks while work
// exists.
#include <sched.h>

#include <cstdio>
#include <exception>
#include <string>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/task_group.hpp>

#include "engine.hpp"
#include "find_work.hpp"
#include "parking.hpp"

namespace strata::detail {

void worker_loop(worker& w) {
  runtime_core& rt = *w.rt;
  for (;;) {
    if (run_one(w, false)) continue;
    if (task* t = idle_phase(w)) {
      run_task(w, t);
      continue;
    }
    if (rt.stopping.load(std::memory_order_acquire)) {
      // Drain what may still be there (nothing, after wait_idle), then leave.
      if (run_one(w, true)) continue;
      w.pool.flush_outgoing();
      return;
    }
  }
}

void help_until(worker& w, bool (*pred)(const void*), const void* ctx) {
  unsigned misses = 0;
  while (!pred(ctx)) {
    if (run_one(w, misses % k_far_period == k_far_period - 1)) {
      misses = 0;
      continue;
    }
    // Inline mode: the other workers run only when this thread runs them.
    if (tick_others(w)) {
      misses = 0;
      continue;
    }
    cpu_relax();
    if (++misses % 64 == 0) sched_yield();
  }
}

void free_frame_away(worker& w, task* t) noexcept { w.pool.free_to(w.rt->workers[t->home]->pool, t); }

void report_detached_exception(worker& w, std::exception_ptr e) noexcept {
  w.counters.detached_exceptions.add();
  // Reported once per runtime (the count is in stats()).
  if (w.rt->detached_errors_reported.fetch_add(1, std::memory_order_relaxed) != 0) return;  // relaxed: a count
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    what = ex.what();
  } catch (...) {
  }
  std::fprintf(stderr, "strata: a detached task threw: %s (further ones are counted in stats())\n", what.c_str());
}

}  // namespace strata::detail
