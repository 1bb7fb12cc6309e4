// Waiting without blocking a worker, and waiting outside the workers in
// inline mode (design in ext/wait.hpp).
#include <sched.h>

#include <mutex>
#include <thread>

#include <strata/runtime/ext/wait.hpp>

#include "engine.hpp"
#include "find_work.hpp"

namespace strata::detail {

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

bool drive_inline(runtime_core& rt) {
  std::unique_lock lock(rt.engine_mutex);
  if (rt.hosts.load(std::memory_order_relaxed) != 0) return false;  // relaxed: written under the mutex
  const std::size_t ran = tick_pass(rt);
  lock.unlock();
  if (ran == 0) std::this_thread::yield();  // waiting for another thread's submission
  return true;
}

}  // namespace strata::detail
