// runtime_core: the state every worker and submitter of one runtime shares,
// and the seams' registries: subsystems attached to it, work sources
// registered on its workers (all defined in src/seams.cpp). Modules built on
// the core (actors, lock mode, the MPI bridge) also use ext/submit.hpp
// (submission), ext/wait.hpp (waiting) and ext/spawn.hpp (the spawn path).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <vector>

#include <strata/config.hpp>
#include <strata/runtime/config.hpp>
#include <strata/runtime/ext/subsystem.hpp>
#include <strata/runtime/ext/sync.hpp>
#include <strata/runtime/ext/trace.hpp>
#include <strata/runtime/ext/worker.hpp>
#include <strata/topology/placement.hpp>

namespace strata {
class runtime;
class task_group;
}

namespace strata::detail {

class injector;        // per-NUMA-node MPMC queue (src/injector.hpp)
struct external_lane;  // a submitting thread's own deque (src/lanes.hpp)

struct runtime_core {
  runtime_core(placement_plan p, const runtime_config& settings);
  ~runtime_core();  // out of line: injector is complete only in runtime.cpp
  runtime_core(const runtime_core&) = delete;
  runtime_core& operator=(const runtime_core&) = delete;

  placement_plan plan;
  runtime_config settings;  // validated; modules read their settings here
  std::vector<worker_ptr> workers;                    // filled before any worker runs
  std::vector<stealer<task*>> stealers;              // one per worker, read by thieves
  std::vector<std::unique_ptr<injector>> injectors;  // one per NUMA node
  std::vector<int> node_of_cpu;                      // OS PU -> NUMA node, for external submits
  std::vector<std::uint64_t> rng_seeds;              // victim choice, per worker (fixed under deterministic_seed)
  bool pinned = false;
  bool deterministic = false;
  bool external_engine = false;  // settings.engine == engine::external
  // settings.policy (policy.cpp tells what each one changes): `steals` under
  // tiered_stealing (deques shared, lanes, steal tiers); `shares` under
  // tiered_stealing and hybrid (the injectors, which are hybrid's spill
  // queues). Neither under pinned_mpsc: a worker runs only what was sent to
  // it or spawned on it.
  bool steals = true;
  bool shares = true;
  // Non-stealing policies: the next worker a submission from outside goes
  // to (round robin; relaxed RMW, a placement hint).
  std::atomic<std::uint32_t> next_home{0};
  // hybrid: submissions from outside that found their worker's inbox at the
  // bound and went to the spill queue (relaxed RMW, statistics).
  std::atomic<std::uint64_t> external_spills{0};

  // Per package: spinners (low half) and sleepers (high half); see parking.cpp.
  std::unique_ptr<package_idle[]> idle;
  std::size_t num_packages = 0;
  // Submissions in flight from outside and the shutdown flag (Dekker pair:
  // a submitter raises active_submits then reads accepting; shutdown clears
  // accepting then waits for active_submits to drain; both seq_cst).
  alignas(k_destructive_size) std::atomic<std::int64_t> active_submits{0};
  std::atomic<bool> accepting{true};
  std::atomic<bool> stopping{false};  // workers exit their loop (set after the last task)
  // Tasks created off the workers (RMW by submitters; read by wait_idle).
  alignas(k_destructive_size) std::atomic<std::uint64_t> external_created{0};
  std::atomic<std::uint64_t> detached_errors_reported{0};
  // Threads that are not workers, blocked in future::get, task_group::wait, wait_idle.
  external_waiters ext;

  // engine::owned: the worker threads.
  std::vector<pthread_t> threads;
  std::unique_ptr<std::latch> start_latch;  // workers and the constructor meet here once
  std::atomic<bool> start_failed{false};    // a worker thread could not start: the others leave
  // engine::external (engine.cpp): threads inside run_worker (RMW under
  // engine_mutex, read by shutdown and wait_idle); engine_mutex also
  // serialises tick passes against hosting.
  std::mutex engine_mutex;
  std::atomic<std::uint32_t> hosts{0};
  strata::runtime* self = nullptr;  // the public object (this_runtime())
  const std::uint64_t id;           // unique in the process: the key of the threads' lane caches

  // External lanes (src/lanes.hpp): lanes[0, num_lanes) are scanned by the
  // workers; each entry is published with a release store of num_lanes
  // (acquire loads) and stays until the runtime dies.
  static constexpr unsigned k_max_lanes = 64;
  std::mutex lane_mutex;  // taking and creating lanes
  std::array<external_lane*, k_max_lanes> lanes{};
  std::atomic<unsigned> num_lanes{0};
  std::vector<std::unique_ptr<external_lane>> owned_lanes;
  std::uint64_t start_ns = 0;
  // STRATA_TRACE: the timeline's rings and file (ext/trace.hpp); null when
  // the runtime does not trace. Set before any worker runs, never changed.
  std::unique_ptr<tracer> trace;

  // --- Seams (work_source.hpp, subsystem.hpp) ---

  // The attached subsystem under `key`, or nullptr. Lock-free: entries are
  // published with a release store of their pointer and never removed
  // before the runtime dies.
  subsystem* find(subsystem_key key) const noexcept;
  // The subsystem under `key`, made by `make` (under seam_mutex, which is
  // recursive: a subsystem's constructor may attach another one or register
  // work sources) when there is none yet. Throws runtime_error when the
  // table is full; a `make` that throws attaches nothing.
  subsystem& attach(subsystem_key key, const std::function<std::unique_ptr<subsystem>()>& make);
  // Registers a work source on every worker, made by make(worker), at the
  // same index on each (a routed frame's `sink`), then wakes every worker so
  // that none sleeps without having consulted it; returns the index. Under
  // seam_mutex (a subsystem's constructor calls it from attach).
  unsigned add_source(const std::function<work_source*(worker&)>& make);
  // Every attached subsystem, in attach order.
  template <class F>
  void for_each_subsystem(F&& f) const {
    const unsigned n = num_subsystems.load(std::memory_order_acquire);  // acquire: pairs with attach's release
    for (unsigned i = 0; i < n; ++i) f(*subsystems[i].object);
  }

  static constexpr unsigned k_max_subsystems = 8;
  struct subsystem_entry {
    subsystem_key key = nullptr;
    subsystem* object = nullptr;
  };
  std::recursive_mutex seam_mutex;  // attach and add_source
  std::array<subsystem_entry, k_max_subsystems> subsystems{};
  std::atomic<unsigned> num_subsystems{0};  // release store in attach, acquire loads in find
  // Owned here and destroyed before the workers (declared after them): the
  // work sources first (an actor destroyed with its table may still use its
  // subsystem), then the subsystems, youngest first.
  std::vector<std::unique_ptr<subsystem>> owned_subsystems;
  std::vector<std::unique_ptr<work_source>> owned_sources;
};

// The subsystem S of rt (S has `static constexpr char key` and a
// constructor taking runtime_core&), attached on first use.
template <class S>
S& subsystem_of(runtime_core& rt) {
  if (subsystem* s = rt.find(&S::key)) return static_cast<S&>(*s);
  return static_cast<S&>(rt.attach(&S::key, [&rt] { return std::unique_ptr<subsystem>(new S(rt)); }));
}

}  // namespace strata::detail
