// The engine seam: who runs the worker loops when the runtime owns no
// thread (config::engine = engine::external).
//
// Two ways, never at once:
// - Hosting: run_worker(w) runs worker w's loop on the calling thread until
//   shutdown; each worker is hosted by at most one thread (its `hosted`
//   flag), and shutdown waits until every run_worker call has returned.
// - Inline: tick() runs one pass of every worker, in worker order, on the
//   calling thread. Each worker runs what it finds (inbox, deque, work
//   sources, injector, steals) up to k_tick_budget units. With one thread
//   doing everything in a fixed order, a program of tasks, actors and
//   lock-mode tasks runs the same way every time. A task that waits inside
//   a pass (future::get, task_group::wait) helps as on any worker, and when
//   its own worker has nothing, the pass runs the other workers from there
//   (tick_others): they have no thread of their own to do it.
// engine_mutex serialises passes and hosting claims: run_worker waits for a
// pass to end, tick refuses while a worker is hosted, and a wait outside
// the workers (future::get, task_group::wait, wait_idle) ticks on the
// caller only while nobody hosts (drive_inline). With some workers hosted
// and some not, wait_idle reports the unhosted worker after a grace period
// (quiescence.cpp); a future or task_group wait blocks, as it would on a
// worker that never runs, so a program waits with wait_idle first.
//
// The limit of inline mode: one thread, one stack. A task that waits inside
// a pass runs the others from its wait, so a wait nested above another wait
// on the same stack can only return after the inner one returns. A program
// whose tasks wait on each other in both directions (task A waits for B,
// which waits for something A does after its wait) finishes with threads
// but not inline; so do two inline runtimes whose tasks wait on each other.
//
// Rejected: tick passes that yield to a waiting task's continuation (that
// needs stackful tasks), and one thread per worker in inline mode (then it
// is engine::owned).
#include "engine.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <strata/numa_alloc/memory.hpp>
#include <strata/runtime/runtime.hpp>

#include "find_work.hpp"

namespace strata {
namespace detail {
namespace {

constexpr std::size_t k_tick_budget = 64;  // units per worker per pass

// The runtime whose pass this thread is running, or nullptr.
thread_local runtime_core* t_ticking = nullptr;

std::size_t run_worker_budget(worker& w) noexcept {
  set_current_worker(&w);
  std::size_t ran = 0;
  while (ran < k_tick_budget && run_one(w, true)) ++ran;
  w.pool.flush_outgoing();
  return ran;
}

}  // namespace

std::size_t tick_pass(runtime_core& rt) noexcept {
  worker* const outer = current_worker();
  runtime_core* const outer_tick = t_ticking;
  t_ticking = &rt;
  std::size_t ran = 0;
  for (auto& w : rt.workers) ran += run_worker_budget(*w);
  t_ticking = outer_tick;
  set_current_worker(outer);
  return ran;
}

bool tick_others(worker& w) noexcept {
  if (t_ticking != w.rt) return false;
  std::size_t ran = 0;
  for (auto& other : w.rt->workers) {
    if (other.get() != &w) ran += run_worker_budget(*other);
  }
  set_current_worker(&w);
  return ran != 0;
}

}  // namespace detail

namespace {

void require_external(const detail::runtime_core& rt, const char* api) {
  if (!rt.external_engine) {
    throw usage_error(std::string("strata::runtime::") + api +
                      ": this runtime runs its own worker threads (config::engine = engine::owned); set "
                      "config::engine = strata::engine::external to host or tick the workers yourself");
  }
}

void require_outside_task(const char* api) {
  if (detail::current_worker() != nullptr) {
    throw usage_error(std::string("strata::runtime::") + api +
                      " called on a thread that runs a worker (from inside a task, or on a run_worker host): "
                      "call it from a thread outside every runtime's workers");
  }
}

// Restores the calling thread's CPU affinity when run_worker returns.
struct affinity_guard {
  cpu_set_t saved;
  bool valid = false;
  affinity_guard() noexcept { valid = pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) == 0; }
  ~affinity_guard() {
    if (valid) pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
  }
  affinity_guard(const affinity_guard&) = delete;
  affinity_guard& operator=(const affinity_guard&) = delete;
};

}  // namespace

void runtime::run_worker(worker_id id) {
  auto& rt = *m_core;
  require_external(rt, "run_worker");
  require_outside_task("run_worker");
  check_worker(id, "run_worker");
  detail::worker& w = *rt.workers[id.value];
  {
    std::lock_guard lock(rt.engine_mutex);
    if (rt.stopping.load(std::memory_order_acquire)) return;  // shut down: nothing to host
    if (w.hosted.load(std::memory_order_relaxed) != 0) {       // relaxed: written under the mutex
      throw usage_error("strata::runtime::run_worker: worker " + std::to_string(id.value) +
                        " is already hosted by another thread; each worker is hosted by one thread");
    }
    w.hosted.store(1, std::memory_order_release);  // release: read (acquire) by wait_idle's hosting check
    rt.hosts.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: shutdown and wait_idle poll it
  }
  struct release {
    detail::runtime_core& rt;
    detail::worker& w;
    ~release() {
      {
        std::lock_guard lock(rt.engine_mutex);
        w.hosted.store(0, std::memory_order_release);  // release: as above
      }
      // The last access to the runtime: once hosts is 0, shutdown may return
      // and the runtime be destroyed (engine_mutex included).
      rt.hosts.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: pairs with shutdown's loads
    }
  } leave{rt, w};
  affinity_guard affinity;
  if (rt.pinned) {
    const worker_place& place = rt.plan.workers()[id.value];
    try {
      rt.plan.machine().bind_current_thread(place.pu_os_index);
      set_thread_node(numa_node{place.numa_os_index});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "strata: the thread hosting worker %u runs unpinned: %s\n", id.value, e.what());
    }
  }
  detail::set_current_worker(&w);
  detail::worker_loop(w);
  detail::set_current_worker(nullptr);
}

std::size_t runtime::tick() {
  require_external(*m_core, "tick");
  require_outside_task("tick");
  std::lock_guard lock(m_core->engine_mutex);
  return tick_pass(true);
}

bool runtime::try_tick() {
  require_external(*m_core, "try_tick");
  require_outside_task("try_tick");
  std::unique_lock lock(m_core->engine_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  return tick_pass(true) != 0;
}

// Caller holds engine_mutex.
std::size_t runtime::tick_pass(bool refuse_hosted) {
  auto& rt = *m_core;
  if (refuse_hosted && rt.hosts.load(std::memory_order_relaxed) != 0) {  // relaxed: written under the mutex
    throw usage_error("strata::runtime::tick: " + std::to_string(rt.hosts.load(std::memory_order_relaxed)) +
                      " worker(s) are hosted by run_worker threads; tick runs the workers inline only while none is");
  }
  return detail::tick_pass(rt);
}

}  // namespace strata
