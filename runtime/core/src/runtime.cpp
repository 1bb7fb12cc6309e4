// runtime: start (placement, pinning, node-local worker state), the
// accessors, shutdown. Submission is in submit.cpp, wait_idle in
// quiescence.cpp, the engine seam in engine.cpp, statistics in stats.cpp.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <latch>
#include <string>
#include <thread>

#include <strata/runtime/profile.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>
#include <strata/topology/ext/fault.hpp>

#include "engine.hpp"
#include "injector.hpp"
#include "lanes.hpp"
#include "parking.hpp"
#include "perf_counters.hpp"
#include "policy.hpp"

namespace strata {
namespace {

constexpr std::size_t k_worker_stack = 64u << 20;  // deep nested waits and recursion

struct start_args {
  detail::runtime_core* rt;
  unsigned index;
  std::latch* ready;
  std::string* error;  // pinning failure of this worker, reported by the constructor
};

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::uint64_t rng_seed(const config& c, unsigned worker) noexcept {
  return c.deterministic_seed ? (*c.deterministic_seed | 1) : 0x9E3779B97F4A7C15ull * (worker + 1);
}

// Allocates worker `index` in memory of `memory` (falling back to plain
// memory when the node is not allowed to us: a cgroup or numactl --membind
// without it) and wires it into rt.
detail::worker* install_worker(detail::runtime_core& rt, unsigned index, memory_placement memory,
                               std::uint64_t seed, std::string* error) {
  detail::worker_ptr w;
  try {
    w = detail::make_worker(memory);
  } catch (const numa_error& e) {
    *error = e.what();
    w = detail::make_worker(memory_placement::unbound());
  }
  w->rt = &rt;
  w->index = index;
  w->pool.set_home(index);
  w->package = static_cast<unsigned>(rt.plan.workers()[index].package);
  w->idle = &rt.idle[w->package];
  w->rng = seed;
  w->spill_at = detail::spill_bound(rt);
  rt.stealers[index] = w->deque.make_stealer();
  if (rt.trace != nullptr) w->trace = rt.trace->worker_ring(index);
  detail::worker* self = w.get();
  rt.workers[index] = std::move(w);
  return self;
}

// Worker thread (engine::owned): pin first, then allocate the worker's
// structures (deque, frame pool, inbox) so their pages are first touched on
// its own node.
void* worker_main(void* p) {
  auto args = *static_cast<start_args*>(p);
  detail::runtime_core& rt = *args.rt;
  const worker_place& place = rt.plan.workers()[args.index];
  // Unpinned (synthetic machine, bind=none, pinning refused): plain memory,
  // first touched by this thread wherever it runs.
  memory_placement memory = memory_placement::unbound();
  if (rt.pinned) {
    try {
      rt.plan.machine().bind_current_thread(place.pu_os_index);
      memory = memory_placement::on(numa_node{place.numa_os_index});
      set_thread_node(numa_node{place.numa_os_index});  // local() needs no CPU lookup on this thread
    } catch (const std::exception& e) {
      *args.error = e.what();
    }
  }
  detail::worker* self = nullptr;
  try {
    self = install_worker(rt, args.index, memory, rt.rng_seeds[args.index], args.error);
    self->os_tid = static_cast<int>(syscall(SYS_gettid));  // for perf_event counters (perf_counters.hpp)
  } catch (const std::exception& e) {
    // Out of memory for the worker itself: the constructor reports it.
    if (args.error->empty()) *args.error = e.what();
    rt.start_failed.store(true, std::memory_order_release);  // release: read after the latch
  }
  profile::register_thread();  // likwid's Marker API (a no-op without STRATA_WITH_LIKWID)
  args.ready->arrive_and_wait();  // every worker exists before anyone steals
  if (rt.start_failed.load(std::memory_order_acquire)) return nullptr;  // acquire: set before the latch completed
  detail::set_current_worker(self);
  detail::worker_loop(*self);
  detail::set_current_worker(nullptr);
  return nullptr;
}

}  // namespace

namespace detail {

worker_ptr make_worker(memory_placement where) {
  void* mem = numa_allocate(sizeof(worker), where, alignof(worker));
  try {
    return worker_ptr(::new (mem) worker(where));
  } catch (...) {
    numa_deallocate(mem, sizeof(worker), alignof(worker));
    throw;
  }
}

void worker_deleter::operator()(worker* w) const noexcept {
  w->~worker();
  numa_deallocate(w, sizeof(worker), alignof(worker));
}

}  // namespace detail

runtime::runtime() : runtime(config::from_env()) {}

runtime::runtime(const config& c) {
  c.validate();
  m_core = std::make_unique<detail::runtime_core>(placement_plan::compute(c), c);
  auto& rt = *m_core;
  rt.self = this;
  rt.pinned = rt.plan.pins();
  rt.deterministic = c.deterministic_seed.has_value();
  rt.external_engine = c.engine == engine::external;
  detail::apply_policy(rt);
  rt.start_ns = now_ns();
  const unsigned n = static_cast<unsigned>(rt.plan.num_workers());
  for (std::size_t i = 0; i < rt.plan.machine().num_numa_nodes(); ++i) {
    rt.injectors.push_back(std::make_unique<detail::injector>());
  }
  for (const auto& pu : rt.plan.machine().pus()) {
    if (pu.os_index >= static_cast<int>(rt.node_of_cpu.size())) rt.node_of_cpu.resize(pu.os_index + 1, 0);
    rt.node_of_cpu[static_cast<std::size_t>(pu.os_index)] = pu.numa_node;
  }
  rt.num_packages = std::max<std::size_t>(1, rt.plan.machine().num_packages());
  rt.idle = std::make_unique<detail::package_idle[]>(rt.num_packages);
  for (const auto& p : rt.plan.workers()) rt.idle[static_cast<std::size_t>(p.package)].workers++;
  rt.workers.resize(n);
  rt.stealers.resize(n);
  for (unsigned i = 0; i < n; ++i) rt.rng_seeds.push_back(rng_seed(c, i));
  if (!c.trace_file.empty()) {
    rt.trace = std::make_unique<detail::tracer>(c.trace_file, c.trace_events);
    for (unsigned i = 0; i < n; ++i) {
      const worker_place& place = rt.plan.workers()[i];
      rt.trace->add_worker(i, "worker " + std::to_string(i) + " (PU " + std::to_string(place.pu_os_index) +
                                  ", NUMA node " + std::to_string(place.numa_node) + ")");
    }
  }
  std::vector<std::string> errors(n);
  if (rt.external_engine) {
    // No threads: the workers' state is made here, in memory of their node
    // when the runtime pins (the host threads are pinned by run_worker).
    for (unsigned i = 0; i < n; ++i) {
      const worker_place& place = rt.plan.workers()[i];
      const memory_placement memory =
          rt.pinned ? memory_placement::on(numa_node{place.numa_os_index}) : memory_placement::unbound();
      install_worker(rt, i, memory, rt.rng_seeds[i], &errors[i]);
    }
  } else {
    start_threads(errors);
  }
  for (unsigned i = 0; i < n; ++i) {
    if (!errors[i].empty()) {
      std::fprintf(stderr, "strata: worker %u runs unpinned: %s\n", i, errors[i].c_str());
      rt.pinned = false;
    }
  }
  if (c.perf_counters) detail::attach_perf_counters(rt);
  if (c.display_affinity) {
    std::fprintf(stderr, "%s", rt.plan.placement_table().c_str());
    if (!rt.plan.pins()) {
      std::fprintf(stderr, "strata: workers are not pinned (%s)\n",
                   rt.plan.bind() == bind_policy::none ? "bind=none" : "the machine is not this system");
    }
  }
}

void runtime::start_threads(std::vector<std::string>& errors) {
  auto& rt = *m_core;
  const unsigned n = static_cast<unsigned>(rt.workers.size());
  // The latch lives as long as the runtime: a worker may still be inside
  // arrive_and_wait (reading the latch) after the constructor's own wait returned.
  rt.start_latch = std::make_unique<std::latch>(static_cast<std::ptrdiff_t>(n) + 1);
  std::latch& ready = *rt.start_latch;
  std::vector<start_args> args(n);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, k_worker_stack);
  auto fail = [&](const std::string& why) {
    for (pthread_t started : rt.threads) pthread_join(started, nullptr);
    rt.threads.clear();
    m_shut_down = true;
    throw runtime_error(why);
  };
  for (unsigned i = 0; i < n; ++i) {
    args[i] = {&rt, i, &ready, &errors[i]};
    pthread_t th;
    int e = fault::fail_here(fault::site::thread_create);
    if (e == 0) e = pthread_create(&th, &attr, worker_main, &args[i]);
    if (e != 0) {
      pthread_attr_destroy(&attr);
      // The workers already started wait on the latch: release them, let
      // them leave, join them, then report.
      rt.start_failed.store(true, std::memory_order_release);  // release: read after the latch
      ready.count_down(static_cast<std::ptrdiff_t>(n - i));
      ready.arrive_and_wait();
      fail("strata: could not start worker thread " + std::to_string(i) + " of " + std::to_string(n) + ": " +
           std::strerror(e));
    }
    rt.threads.push_back(th);
  }
  pthread_attr_destroy(&attr);
  ready.arrive_and_wait();
  if (rt.start_failed.load(std::memory_order_acquire)) {  // acquire: a worker could not allocate its state
    std::string why;
    for (unsigned i = 0; i < n; ++i) {
      if (rt.workers[i] == nullptr) why = "worker " + std::to_string(i) + ": " + errors[i];
    }
    fail("strata: could not start the workers: " + why);
  }
}

// A destructor cannot throw: when shutdown's wait fails (an unhosted worker
// under engine::external, a wait_idle usage error), the runtime says why on
// stderr and stops anyway, abandoning the work that could not run.
runtime::~runtime() {
  try {
    shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: ~runtime: %s; stopping without waiting for the remaining work\n", e.what());
    stop_workers();
    const std::size_t n = abandon_frames();
    std::fprintf(stderr, "strata: ~runtime: %zu task(s) never ran; their callables were destroyed\n", n);
  }
}

// After stop_workers, on the destroying thread alone (no worker thread or
// host is left): destroys the callables of the frames still queued and frees
// the frames, so that their captures (a future's state among them) are
// released. Frames already routed into a work source go with the source.
std::size_t runtime::abandon_frames() noexcept {
  auto& rt = *m_core;
  std::size_t n = 0;
  auto discard = [&n](detail::worker& w, detail::task* t) {
    if (t->how == detail::completion::join) return;  // lives on a stack that is gone: never queued here
    if (t->destroy != nullptr) t->destroy(t);
    detail::free_frame(w, t);
    ++n;
  };
  for (auto& wp : rt.workers) {
    detail::worker& w = *wp;
    detail::task* t = nullptr;
    while (w.deque.pop(t)) discard(w, t);
    // No producer is left, so `busy` (a push half done) cannot last.
    for (auto st = w.inbox.pop(t); st != detail::task_inbox::pop_status::empty; st = w.inbox.pop(t)) {
      if (st == detail::task_inbox::pop_status::item) discard(w, t);
    }
  }
  for (auto& q : rt.injectors) {
    while (detail::task* t = q->pop()) discard(*rt.workers[0], t);
  }
  const unsigned lanes = rt.num_lanes.load(std::memory_order_acquire);  // acquire: pairs with take_lane
  for (unsigned i = 0; i < lanes; ++i) {
    while (auto r = rt.lanes[i]->thieves.steal()) discard(*rt.workers[0], r.value);
  }
  return n;
}

unsigned runtime::num_workers() const noexcept { return static_cast<unsigned>(m_core->workers.size()); }
const std::vector<worker_place>& runtime::placement() const noexcept { return m_core->plan.workers(); }
const placement_plan& runtime::plan() const noexcept { return m_core->plan; }
bool runtime::pinned() const noexcept { return m_core->pinned; }

void runtime::check_worker(worker_id w, const char* api) const {
  if (w.value >= num_workers()) {
    throw usage_error(std::string("strata::runtime::") + api + ": worker " + std::to_string(w.value) +
                      " does not exist (workers 0.." + std::to_string(num_workers() - 1) + ")");
  }
}

const tier_list& runtime::steal_tiers(worker_id w) const {
  check_worker(w, "steal_tiers");
  return m_core->plan.tiers_of(w.value);
}

unsigned runtime::worker_of_node(numa_node n) const {
  const auto& places = m_core->plan.workers();
  unsigned best = num_workers();
  std::uint64_t best_depth = ~0ull;
  for (const auto& p : places) {
    if (p.numa_node != n.value) continue;
    const std::uint64_t d = m_core->workers[p.worker]->inbox.depth();
    if (d < best_depth) {
      best = p.worker;
      best_depth = d;
    }
  }
  if (best == num_workers()) {
    throw usage_error("strata::runtime::submit_on: no worker on NUMA node " + std::to_string(n.value) + " (the " +
                      std::to_string(m_core->plan.machine().num_numa_nodes()) + " node(s) of this runtime's machine)");
  }
  return best;
}

void runtime::shutdown() {
  if (m_shut_down) return;
  auto& rt = *m_core;
  if (detail::worker* w = detail::current_worker(); w != nullptr && w->rt == &rt) {
    throw usage_error("strata::runtime::shutdown called from inside a task of the same runtime");
  }
  // Modules' own threads that submit work (the actors' monitor) stop first.
  rt.for_each_subsystem([](detail::subsystem& s) { s.on_shutdown(); });
  rt.accepting.store(false, std::memory_order_seq_cst);  // seq_cst: Dekker with submitters (active_submits)
  while (rt.active_submits.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  detail::wait_lane_submitters(rt);
  wait_idle();
  stop_workers();
}

void runtime::stop_workers() {
  auto& rt = *m_core;
  rt.stopping.store(true, std::memory_order_seq_cst);  // seq_cst: parkers re-check it after announcing
  detail::wake_all(rt);
  for (pthread_t th : rt.threads) pthread_join(th, nullptr);
  rt.threads.clear();
  // engine::external: every run_worker call returns once it sees stopping.
  while (rt.hosts.load(std::memory_order_seq_cst) != 0) {  // seq_cst: pairs with run_worker's RMWs
    detail::wake_all(rt);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (rt.trace != nullptr) rt.trace->write(rt);  // every worker has left: the rings are still (ext/trace.hpp)
  m_shut_down = true;
}

std::optional<worker_id> this_worker() noexcept {
  if (detail::worker* w = detail::current_worker()) return worker_id{w->index};
  return std::nullopt;
}

runtime* this_runtime() noexcept {
  detail::worker* w = detail::current_worker();
  return w != nullptr ? w->rt->self : nullptr;
}

}  // namespace strata
