// strata::runtime: pinned workers with split work-stealing deques, per-worker
// inboxes, per-NUMA-node injectors and tiered stealing.
//
//   strata::runtime rt;                       // config::from_env()
//   auto f = rt.submit([] { return 42; });    // from any thread
//   rt.spawn([] { ... });                     // detached
//   rt.submit_on(strata::worker_id{1}, fn);   // runs on worker 1
//   rt.wait_idle();
//
// The path of a task: from a worker, onto its own deque (LIFO, private until
// a thief asks); from outside, into the injector of the caller's NUMA node;
// with submit_on, into the target worker's inbox, where it stays (it is not
// stealable). Workers look for work in the order: inbox, own deque, own
// node's injector (also every 61st task, so nothing starves), then steal
// tier by tier (one task within the NUMA node, half of a victim's shared
// work, up to 32, beyond it), then other nodes' injectors; then they spin
// (Go's rules) and park on a futex.
//
// Destruction waits for every spawned task, then joins the workers. After
// shutdown() (or during destruction) submissions throw runtime_error. An
// exception in a detached task is counted and reported once on stderr.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/runtime_core.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/actor.hpp>
#include <strata/runtime/future.hpp>
#include <strata/numa_alloc/numa_allocator.hpp>
#include <strata/runtime/resource.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/topology/config.hpp>
#include <strata/topology/ids.hpp>
#include <strata/topology/placement.hpp>

namespace strata {

class runtime {
 public:
  runtime();  // config::from_env()
  explicit runtime(const config& c);
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;
  ~runtime();

  unsigned num_workers() const noexcept;
  const std::vector<worker_place>& placement() const noexcept;
  const tier_list& steal_tiers(worker_id w) const;
  const placement_plan& plan() const noexcept;
  // True when workers are pinned to their PUs (bind != none on this system).
  bool pinned() const noexcept;

  template <class F>
  auto submit(F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class F>
  void spawn(F&& f);
  template <class F>
  auto submit_on(worker_id w, F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>>;
  // Runs on the least loaded worker of that node (by inbox depth).
  template <class F>
  auto submit_on(numa_node n, F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>>;

  // Returns when every task spawned so far has finished. From inside a task
  // it would wait for itself: usage_error.
  void wait_idle();
  // Stops taking submissions, waits for every task, joins the workers.
  // Idempotent; the destructor calls it.
  void shutdown();

  // Actors (actor.hpp). Elastic and round robin by default; or on one
  // worker, or on the least loaded worker of a NUMA node. Constructor
  // arguments are copied (a restart builds the actor again from them).
  template <class T, class... Args>
  actor_ref<T> spawn_actor(Args&&... args);
  template <class T, class... Args>
  actor_ref<T> spawn_actor(affinity aff, Args&&... args);
  template <class T, class... Args>
  actor_ref<T> spawn_actor(affinity aff, worker_id w, Args&&... args);
  template <class T, class... Args>
  actor_ref<T> spawn_actor(affinity aff, numa_node n, Args&&... args);
  // Moves an elastic actor to worker `to` between two of its messages (the
  // load monitor does this by itself on sustained skew). The future says
  // whether it moved: false for a sticky or gone actor, one in the middle of
  // a turn, or one already there. Messages keep their order; the old worker
  // forwards what still arrives at the old address.
  future<bool> migrate_actor(actor_address a, worker_id to);
  template <class T>
  future<bool> migrate_actor(const actor_ref<T>& a, worker_id to) {
    return migrate_actor(a.address(), to);
  }
  // Decides what happens to an actor whose receive() threw (default: stop).
  void set_supervisor(supervisor s);

  // Lock mode (resource.hpp): fn runs once it holds every listed lock.
  // submit_with_access returns its future; spawn_with_access is detached
  // (as spawn: wait_idle waits for it; an exception is counted in stats
  // and reported once).
  resource make_resource();
  template <class F>
  auto submit_with_access(std::initializer_list<access> list, F&& f, priority p = {})
      -> future<std::invoke_result_t<std::decay_t<F>&>> {
    return submit_with_access(list.begin(), list.size(), std::forward<F>(f), p);
  }
  template <class F>
  auto submit_with_access(const std::vector<access>& list, F&& f, priority p = {})
      -> future<std::invoke_result_t<std::decay_t<F>&>> {
    return submit_with_access(list.data(), list.size(), std::forward<F>(f), p);
  }
  template <class F>
  void spawn_with_access(std::initializer_list<access> list, F&& f, priority p = {}) {
    start_with_access(list.begin(), list.size(), detail::access_body_detached<std::decay_t<F>>{std::forward<F>(f)},
                      p.value);
  }
  template <class F>
  void spawn_with_access(const std::vector<access>& list, F&& f, priority p = {}) {
    start_with_access(list.data(), list.size(), detail::access_body_detached<std::decay_t<F>>{std::forward<F>(f)},
                      p.value);
  }

  runtime_stats stats() const;
  detail::runtime_core& core() noexcept { return *m_core; }

 private:
  template <class F>
  detail::task* make_task(F&& f);
  template <class F>
  auto submit_with_access(const access* list, std::size_t n, F&& f, priority p)
      -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class B>
  void start_with_access(const access* list, std::size_t n, B&& body, int prio);
  template <class D>
  void start_access_request(const access* list, std::size_t n, D&& body, int prio);
  template <class T, class... Args>
  actor_ref<T> spawn_actor_on(affinity aff, int worker, Args&&... args);
  unsigned worker_of_node(numa_node n) const;

  std::unique_ptr<detail::runtime_core> m_core;
  bool m_shut_down = false;
};

// The worker running the caller, or nothing outside a runtime's workers.
std::optional<worker_id> this_worker() noexcept;
// The runtime of the calling worker, or nullptr.
runtime* this_runtime() noexcept;

template <class F>
detail::task* runtime::make_task(F&& f) {
  detail::worker* w = detail::current_worker();
  detail::task* t;
  if (w != nullptr && w->rt == m_core.get()) {
    t = w->pool.allocate();
    if constexpr (detail::k_boxed<F>) w->counters.boxed.add();
  } else {
    t = new detail::task{};
    t->home = detail::k_no_home;
  }
  t->group = nullptr;
  t->how = detail::completion::detached;
  detail::emplace_callable(t, std::forward<F>(f));
  return t;
}

template <class F>
auto runtime::submit(F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  auto st = std::make_shared<detail::future_state<R>>(m_core.get());
  detail::task* t = make_task(detail::future_task<R, std::decay_t<F>>{st, std::forward<F>(f)});
  detail::worker* w = detail::current_worker();
  if (w != nullptr && w->rt == m_core.get()) {
    detail::push_local(*w, t);
  } else {
    detail::submit_external(*m_core, t);
  }
  return future<R>(std::move(st));
}

template <class F>
void runtime::spawn(F&& f) {
  detail::task* t = make_task(std::forward<F>(f));
  detail::worker* w = detail::current_worker();
  if (w != nullptr && w->rt == m_core.get()) {
    detail::push_local(*w, t);
  } else {
    detail::submit_external(*m_core, t);
  }
}

template <class F>
auto runtime::submit_on(worker_id target, F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  if (target.value >= num_workers()) {
    throw usage_error("strata::runtime::submit_on: worker " + std::to_string(target.value) +
                      " does not exist (workers 0.." + std::to_string(num_workers() - 1) + ")");
  }
  auto st = std::make_shared<detail::future_state<R>>(m_core.get());
  detail::task* t = make_task(detail::future_task<R, std::decay_t<F>>{st, std::forward<F>(f)});
  detail::submit_to_worker(*m_core, target.value, t);
  return future<R>(std::move(st));
}

template <class T, class... Args>
actor_ref<T> runtime::spawn_actor_on(affinity aff, int worker, Args&&... args) {
  static_assert(std::is_base_of_v<actor_base, T>, "spawn_actor<T>: T must derive from strata::actor<T>");
  if (worker >= static_cast<int>(num_workers())) {
    throw usage_error("strata::runtime::spawn_actor: worker " + std::to_string(worker) + " does not exist (workers 0.." +
                      std::to_string(num_workers() - 1) + ")");
  }
  detail::spawn_request req;
  req.factory = std::make_unique<detail::actor_factory_of<T, std::decay_t<Args>...>>(
      std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...));
  req.aff = aff;
  req.worker = worker;
  return actor_ref<T>(m_core.get(), detail::spawn_actor(*m_core, std::move(req)));
}

template <class T, class... Args>
actor_ref<T> runtime::spawn_actor(Args&&... args) {
  return spawn_actor_on<T>(affinity::elastic, -1, std::forward<Args>(args)...);
}
template <class T, class... Args>
actor_ref<T> runtime::spawn_actor(affinity aff, Args&&... args) {
  return spawn_actor_on<T>(aff, -1, std::forward<Args>(args)...);
}
template <class T, class... Args>
actor_ref<T> runtime::spawn_actor(affinity aff, worker_id w, Args&&... args) {
  return spawn_actor_on<T>(aff, static_cast<int>(w.value), std::forward<Args>(args)...);
}
template <class T, class... Args>
actor_ref<T> runtime::spawn_actor(affinity aff, numa_node n, Args&&... args) {
  return spawn_actor_on<T>(aff, static_cast<int>(worker_of_node(n)), std::forward<Args>(args)...);
}

template <class F>
auto runtime::submit_with_access(const access* list, std::size_t n, F&& f, priority p)
    -> future<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  auto st = std::make_shared<detail::future_state<R>>(m_core.get());
  start_with_access(list, n, detail::access_body_future<R, std::decay_t<F>>{std::forward<F>(f), st}, p.value);
  return future<R>(std::move(st));
}

// A short list and a small body travel in a task frame: validated here,
// spawned like any task, locks taken by the worker that runs it
// (access_task). Otherwise, or when a lock looks held against it, a heap
// request goes to the dispatcher (resource.cpp).
template <class B>
void runtime::start_with_access(const access* list, std::size_t n, B&& body, int prio) {
  using D = std::decay_t<B>;
  if constexpr (detail::k_access_in_frame<D>) {
    if (n <= detail::access_head::k_locks) {
      detail::access_task<D> t{{}, std::move(body)};
      detail::prepare_locks(*m_core, list, n, t.head.locks, D::api);
      t.head.n = static_cast<std::uint32_t>(n);
      t.head.prio = prio;
      if (!detail::queue_at_submission(*m_core, t.head.locks, n, prio)) {
        spawn(std::move(t));
      } else {
        start_access_request(list, n, std::move(t.body), prio);
      }
      return;
    }
  }
  start_access_request(list, n, std::move(body), prio);
}

template <class D>
void runtime::start_access_request(const access* list, std::size_t n, D&& body, int prio) {
  auto* req = detail::access_request_of<D>::create(std::move(body), prio);
  try {
    detail::prepare_access(*m_core, *req, list, n, D::api);
  } catch (...) {
    req->drop(req);
    throw;
  }
  detail::start_access(*m_core, req);
}

template <class F>
auto runtime::submit_on(numa_node n, F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>> {
  return submit_on(worker_id{worker_of_node(n)}, std::forward<F>(f));
}

}  // namespace strata
