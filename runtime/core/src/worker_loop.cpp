// The worker loop: run what find_work finds, wait in the idle phase when
// there is nothing (parking.cpp), leave when the runtime stops. Waits on a
// worker (task_group::wait, future::get) run the same search while their
// condition does not hold (help_until, wait.cpp).
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

}  // namespace strata::detail
