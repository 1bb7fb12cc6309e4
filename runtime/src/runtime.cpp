// runtime: start (placement, pinning, node-local worker state), external
// submission, wait_idle, shutdown, statistics.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <latch>
#include <string>
#include <thread>

#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include "actor_table.hpp"
#include "injector.hpp"
#include "resource_dispatch.hpp"
#include "worker_loop.hpp"

namespace strata {
namespace {

constexpr std::size_t k_worker_stack = 64u << 20;  // deep nested waits and recursion

struct start_args {
  detail::runtime_core* rt;
  unsigned index;
  std::uint64_t rng_seed;
  std::latch* ready;
  std::string* error;  // pinning failure of this worker, reported by the constructor
};

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
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
  destroy_actor_table(*w);
  w->~worker();
  numa_deallocate(w, sizeof(worker), alignof(worker));
}

}  // namespace detail

namespace {

// Worker thread: pin first, then allocate the worker's structures (deque,
// frame pool, inbox) so their pages are first touched on its own node.
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
  detail::worker_ptr w;
  try {
    w = detail::make_worker(memory);
  } catch (const numa_error& e) {
    // The machine's node is not allowed to us (a cgroup or numactl
    // --membind without it): the worker's memory goes where the kernel lets it.
    *args.error = e.what();
    w = detail::make_worker(memory_placement::unbound());
  }
  w->rt = &rt;
  w->index = args.index;
  w->pool.set_home(args.index);
  w->package = static_cast<unsigned>(rt.plan.workers()[args.index].package);
  w->idle = &rt.idle[w->package];
  w->rng = args.rng_seed;
  rt.stealers[args.index] = w->deque.make_stealer();
  detail::worker* self = w.get();
  rt.workers[args.index] = std::move(w);
  args.ready->arrive_and_wait();  // every worker exists before anyone steals
  if (rt.start_failed.load(std::memory_order_acquire)) return nullptr;  // acquire: set before the latch completed
  detail::set_current_worker(self);
  detail::worker_loop(*self);
  detail::set_current_worker(nullptr);
  return nullptr;
}

double seconds(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

runtime::runtime() : runtime(config::from_env()) {}

runtime::runtime(const config& c) {
  m_core = std::make_unique<detail::runtime_core>(placement_plan::compute(c));
  auto& rt = *m_core;
  rt.self = this;
  rt.pinned = rt.plan.pins();
  rt.deterministic = c.deterministic_seed.has_value();
  if (c.actor_budget == 0) {
    throw usage_error("strata::config::actor_budget is 0; accepted: at least 1 message per actor turn");
  }
  rt.actor_budget = c.actor_budget;
  rt.access = std::make_unique<detail::access_dispatcher>(c.reader_front_runs,
                                                          static_cast<unsigned>(rt.plan.num_workers()));
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
  // The latch lives as long as the runtime: a worker may still be inside
  // arrive_and_wait (reading the latch) after the constructor's own wait returned.
  rt.start_latch = std::make_unique<std::latch>(static_cast<std::ptrdiff_t>(n) + 1);
  std::latch& ready = *rt.start_latch;
  std::vector<std::string> errors(n);
  std::vector<start_args> args(n);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, k_worker_stack);
  for (unsigned i = 0; i < n; ++i) {
    const std::uint64_t seed = c.deterministic_seed ? (*c.deterministic_seed | 1) : 0x9E3779B97F4A7C15ull * (i + 1);
    args[i] = {&rt, i, seed, &ready, &errors[i]};
    pthread_t th;
    if (const int e = pthread_create(&th, &attr, worker_main, &args[i]); e != 0) {
      pthread_attr_destroy(&attr);
      // The workers already started wait on the latch: release them, let
      // them leave, join them, then report.
      rt.start_failed.store(true, std::memory_order_release);  // release: read after the latch
      ready.count_down(static_cast<std::ptrdiff_t>(n - i));
      ready.arrive_and_wait();
      for (pthread_t started : rt.threads) pthread_join(started, nullptr);
      rt.threads.clear();
      m_shut_down = true;
      throw runtime_error(std::string("strata: could not start worker thread ") + std::to_string(i) + " of " +
                          std::to_string(n) + ": " + std::strerror(e));
    }
    rt.threads.push_back(th);
  }
  pthread_attr_destroy(&attr);
  ready.arrive_and_wait();
  for (unsigned i = 0; i < n; ++i) {
    if (!errors[i].empty()) {
      std::fprintf(stderr, "strata: worker %u runs unpinned: %s\n", i, errors[i].c_str());
      rt.pinned = false;
    }
  }
  if (!rt.deterministic) detail::start_monitor(rt, c.monitor_period_ms);
  if (c.display_affinity) {
    std::fprintf(stderr, "%s", rt.plan.placement_table().c_str());
    if (!rt.plan.pins()) {
      std::fprintf(stderr, "strata: workers are not pinned (%s)\n",
                   rt.plan.bind() == bind_policy::none ? "bind=none" : "the machine is not this system");
    }
  }
}

runtime::~runtime() { shutdown(); }

unsigned runtime::num_workers() const noexcept { return static_cast<unsigned>(m_core->workers.size()); }
const std::vector<worker_place>& runtime::placement() const noexcept { return m_core->plan.workers(); }
const placement_plan& runtime::plan() const noexcept { return m_core->plan; }
bool runtime::pinned() const noexcept { return m_core->pinned; }

const tier_list& runtime::steal_tiers(worker_id w) const {
  if (w.value >= num_workers()) {
    throw usage_error("strata::runtime::steal_tiers: worker " + std::to_string(w.value) + " does not exist (workers 0.." +
                      std::to_string(num_workers() - 1) + ")");
  }
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

void runtime::wait_idle() {
  auto& rt = *m_core;
  if (detail::worker* w = detail::current_worker(); w != nullptr && w->rt == &rt) {
    throw usage_error("strata::runtime::wait_idle called from inside a task: it would wait for itself");
  }
  auto idle = [&rt] {
    // Lock-mode requests: released before submitted (released never
    // exceeds submitted, so equal sums read in this order mean none was
    // pending when `released` was read). A queued request has no frame;
    // `submitted` is read again after the frames, so a request submitted
    // by a task that finished meanwhile is seen. Frames: finished, then
    // created (see task_group.hpp for why this order). Every read acquires
    // (pairs with the counters' release increments).
    auto lock_sums = [&rt](bool released) {
      std::uint64_t sum = released ? rt.external_lock_released.load(std::memory_order_acquire)
                                   : rt.external_lock_submitted.load(std::memory_order_acquire);
      for (auto& w : rt.workers) sum += released ? w->counters.lock_released.get() : w->counters.lock_submitted.get();
      return sum;
    };
    const std::uint64_t released = lock_sums(true);
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::uint64_t submitted = lock_sums(false);
    if (released != submitted) return false;
    std::uint64_t finished = 0, created = 0;
    for (auto& w : rt.workers) finished += w->counters.executed.get();
    std::atomic_thread_fence(std::memory_order_acquire);  // acquire: pairs with the counters' release increments
    for (auto& w : rt.workers) created += w->counters.spawned.get();
    created += rt.external_created.load(std::memory_order_acquire);  // acquire: pairs with the release increment in submit
    if (finished != created) return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    return lock_sums(false) == submitted;
  };

  unsigned spins = 0;
  while (!idle()) {
    if (++spins < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(spins < 1024 ? 20 : 200));
    }
  }
}

void runtime::shutdown() {
  if (m_shut_down) return;
  auto& rt = *m_core;
  if (detail::worker* w = detail::current_worker(); w != nullptr && w->rt == &rt) {
    throw usage_error("strata::runtime::shutdown called from inside a task of the same runtime");
  }
  detail::stop_monitor(rt);  // it submits tasks: stop it before refusing them
  rt.accepting.store(false, std::memory_order_seq_cst);  // seq_cst: Dekker with submitters (active_submits)
  while (rt.active_submits.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  wait_idle();
  rt.stopping.store(true, std::memory_order_seq_cst);  // seq_cst: parkers re-check it after announcing
  detail::wake_all(rt);
  for (pthread_t th : rt.threads) pthread_join(th, nullptr);
  rt.threads.clear();
  m_shut_down = true;
}

runtime_stats runtime::stats() const {
  const auto& rt = *m_core;
  runtime_stats s;
  const std::uint64_t elapsed = now_ns() - rt.start_ns;
  for (std::size_t i = 0; i < rt.workers.size(); ++i) {
    const auto& w = *rt.workers[i];
    const auto& c = w.counters;
    const auto& place = rt.plan.workers()[i];
    worker_stats ws;
    ws.worker = static_cast<unsigned>(i);
    ws.pu = place.pu_os_index;
    ws.numa_node = place.numa_node;
    ws.pinned = rt.pinned;
    ws.tasks_executed = detail::tasks_executed(w);
    ws.tasks_spawned = detail::tasks_spawned(w);
    for (std::size_t k = 0; k < rt.plan.tiers_of(ws.worker).size() && k < detail::k_max_tiers; ++k) {
      ws.steals_by_tier.push_back(c.steals_by_tier[k].get());
      ws.tier_kinds.emplace_back(to_string(rt.plan.tiers_of(ws.worker)[k].kind));
    }
    ws.tasks_stolen = c.stolen.get();
    ws.steal_attempts = c.steal_attempts.get();
    ws.steal_failures = c.steal_failures.get();
    ws.injector_tasks = c.injector.get();
    ws.inbox_tasks = c.inbox.get();
    ws.inbox_depth = w.inbox.depth();
    ws.deque_high_water = c.high_water.get();
    ws.publishes = c.publishes.get();
    ws.parks = c.parks.get();
    ws.wakeups = c.wakeups.get();
    ws.boxed_tasks = c.boxed.get();
    ws.detached_exceptions = c.detached_exceptions.get();
    ws.actors = c.actors_live.get();
    ws.messages_local = c.messages_local.get();
    ws.messages_remote = c.messages_remote.get();
    ws.mailbox_high_water = c.mailbox_high_water.get();
    ws.dead_letters = c.dead_letters.get();
    ws.actor_failures = c.actor_failures.get();
    ws.migrations_proposed = c.migrations_proposed.get();
    ws.migrations_done = c.migrations_done.get();
    const std::uint64_t idle = c.idle_ns.get();
    ws.idle_s = seconds(idle);
    ws.busy_s = seconds(elapsed > idle ? elapsed - idle : 0);
    s.workers.push_back(std::move(ws));
  }
  s.external_submits = rt.external_created.load(std::memory_order_relaxed);  // relaxed: statistics
  return s;
}

std::optional<worker_id> this_worker() noexcept {
  if (detail::worker* w = detail::current_worker()) return worker_id{w->index};
  return std::nullopt;
}

runtime* this_runtime() noexcept {
  detail::worker* w = detail::current_worker();
  return w != nullptr ? w->rt->self : nullptr;
}

namespace detail {

runtime_core::runtime_core(placement_plan p) : plan(std::move(p)) {}
runtime_core::~runtime_core() { stop_monitor(*this); }

namespace {

// Guards a submission from outside against a concurrent shutdown.
struct submit_guard {
  runtime_core& rt;
  explicit submit_guard(runtime_core& r, task* t) : rt(r) {
    // seq_cst: Dekker with shutdown (store accepting=false, then read active_submits).
    rt.active_submits.fetch_add(1, std::memory_order_seq_cst);
    if (!rt.accepting.load(std::memory_order_seq_cst)) {
      rt.active_submits.fetch_sub(1, std::memory_order_seq_cst);
      if (t->destroy != nullptr) t->destroy(t);
      if (t->home == k_no_home) delete t;
      throw runtime_error("strata: the runtime is shutting down or shut down; it takes no new tasks");
    }
  }
  ~submit_guard() { rt.active_submits.fetch_sub(1, std::memory_order_seq_cst); }  // seq_cst: shutdown waits for 0
  submit_guard(const submit_guard&) = delete;
  submit_guard& operator=(const submit_guard&) = delete;
};

std::size_t caller_node(const runtime_core& rt) noexcept {
  const int cpu = sched_getcpu();
  if (cpu >= 0 && static_cast<std::size_t>(cpu) < rt.node_of_cpu.size()) {
    return static_cast<std::size_t>(rt.node_of_cpu[static_cast<std::size_t>(cpu)]) % rt.injectors.size();
  }
  return 0;
}

}  // namespace

void admit_external(runtime_core& rt) {
  // seq_cst: Dekker with shutdown, as in submit_guard.
  rt.active_submits.fetch_add(1, std::memory_order_seq_cst);
  if (!rt.accepting.load(std::memory_order_seq_cst)) {
    rt.active_submits.fetch_sub(1, std::memory_order_seq_cst);
    throw runtime_error("strata: the runtime is shutting down or shut down; it takes no new tasks");
  }
}

void end_external(runtime_core& rt) noexcept {
  rt.active_submits.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: shutdown waits for 0
}

void submit_external(runtime_core& rt, task* t, bool admitted) {
  worker* w = current_worker();
  if (w != nullptr && w->rt == &rt) {  // a worker of this runtime: its own deque
    w->counters.spawned.add();
    w->deque.push(t);
    publish_and_wake(*w);
    return;
  }
  std::optional<submit_guard> guard;
  if (!admitted) guard.emplace(rt, t);
  rt.external_created.fetch_add(1, std::memory_order_release);  // release: wait_idle counts it
  const std::size_t node = caller_node(rt);
  rt.injectors[node]->push(t);
  // Wake near a worker of that node.
  unsigned near = 0;
  for (const auto& p : rt.plan.workers()) {
    if (static_cast<std::size_t>(p.numa_node) == node) {
      near = p.worker;
      break;
    }
  }
  maybe_wake(rt, near);
}

void submit_to_worker(runtime_core& rt, unsigned index, task* t, bool admitted) {
  worker* w = current_worker();
  std::optional<submit_guard> guard;
  if (w != nullptr && w->rt == &rt) {
    w->counters.spawned.add();
  } else {
    if (!admitted) guard.emplace(rt, t);
    rt.external_created.fetch_add(1, std::memory_order_release);  // release: wait_idle counts it
  }
  worker& target = *rt.workers[index];
  target.inbox.push(t);
  // seq_cst fence: orders the inbox push before the read of `sleeping`
  // (pairs with the parker's seq_cst store of sleeping, then its re-check).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (target.sleeping.load(std::memory_order_relaxed) == 1) wake_worker(rt, index);  // relaxed: ordered by the fence
}

std::size_t default_grain(const runtime& rt, std::size_t n) noexcept {
  const std::size_t pieces = 8 * static_cast<std::size_t>(rt.num_workers());
  return n / pieces > 0 ? n / pieces : 1;
}

runtime& current_runtime(const char* what) {
  runtime* r = this_runtime();
  if (r == nullptr) {
    throw usage_error(std::string(what) + " without a runtime argument must be called from inside a task");
  }
  return *r;
}

bool on_worker_of(const runtime& rt) noexcept {
  worker* w = current_worker();
  return w != nullptr && w->rt->self == &rt;
}

}  // namespace detail
}  // namespace strata
