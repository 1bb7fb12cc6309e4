// strata::runtime: pinned workers with split work-stealing deques, per-worker
// inboxes, per-NUMA-node injectors and tiered stealing.
//
//   strata::runtime rt;                       // config::from_env()
//   auto f = rt.submit([] { return 42; });    // from any thread
//   rt.spawn([] { ... });                     // detached
//   rt.submit_on(strata::worker_id{1}, fn);   // runs on worker 1
//   rt.wait_idle();
//
// Where a task goes: from a worker, onto its own deque (LIFO, private until a
// thief asks); from outside, into the injector of the caller's NUMA node;
// with submit_on, into the target worker's inbox, where it stays (it is not
// stealable). docs/path-of-a-task.md follows one through the code.
//
// Engines (config::engine): by default the runtime starts one pinned thread
// per worker. With engine::external it starts none: a thread of the user's
// hosts worker w's loop inside run_worker(w) until shutdown, or the caller
// runs every worker inline, one pass at a time, with tick() / try_tick()
// (a whole program of tasks and actors on one thread, in a reproducible
// order). A wait outside the workers (future::get, task_group::wait,
// wait_idle) with no worker hosted ticks on the caller meanwhile.
//
// Destruction waits for every spawned task, then joins the workers. After
// shutdown() (or during destruction) submissions throw runtime_error. An
// exception in a detached task is counted and reported once on stderr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata/runtime/config.hpp>
#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/spawn.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/future.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/topology/ids.hpp>
#include <strata/topology/placement.hpp>

namespace strata {

// Types of the actors and lock-mode modules, named by the member functions
// below that those modules define.
template <class T>
class actor_ref;
class actor_address;
enum class affinity : std::uint8_t;
class resource;
struct access;
struct priority;

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

  // Returns when every task, message and lock-mode task submitted so far has
  // finished. From inside a task it would wait for itself: usage_error. With
  // engine::external: ticks on the caller while no worker is hosted; once
  // some are, a worker that stays unhosted is a usage_error naming it.
  void wait_idle();
  // Stops taking submissions, waits for every task, joins the workers (or
  // waits until every run_worker call returned). Idempotent; the
  // destructor calls it.
  void shutdown();

  // --- Engine seam (engine::external) ---
  // Hosts worker w's loop on the calling thread until shutdown (pinned to
  // w's PU when the runtime pins, the thread's affinity restored on
  // return). usage_error: the runtime owns its workers, w does not exist or
  // is hosted already, the caller is a worker.
  void run_worker(worker_id w);
  // One pass of every worker, in worker order, on the calling thread: each
  // runs what it finds (inbox, deque, work sources, injector, steals) up to
  // a fairness budget. Returns the units of work run. Passes of several
  // callers are serialised. usage_error: the runtime owns its workers, a
  // worker is hosted by run_worker, or the caller is inside a task.
  std::size_t tick();
  // As tick(), but returns false at once when another thread is in a pass;
  // true when this pass ran something.
  bool try_tick();

  // --- Actors: defined by strata::actors (<strata/actors/actor.hpp>) ---
  // Elastic and round robin by default; or on one worker, or on the least
  // loaded worker of a NUMA node. Constructor arguments are copied (a
  // restart builds the actor again from them).
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
  future<bool> migrate_actor(const actor_ref<T>& a, worker_id to);
  // Decides what happens to an actor whose receive() threw (default: stop);
  // S converts to strata::supervisor.
  template <class S>
  void set_supervisor(S&& s);

  // --- Lock mode: defined by strata::access (<strata/access/resource.hpp>) ---
  // fn runs once it holds every listed lock. submit_with_access returns its
  // future; spawn_with_access is detached (as spawn: wait_idle waits for it;
  // an exception is counted in stats and reported once).
  resource make_resource();
  // Gives a resource back once its tasks have finished (usage_error when a
  // task holds or waits for it, or when it was released already). Its state
  // is reused by a later make_resource, so a program that makes resources
  // as it goes keeps its memory flat. A copy of the handle kept after the
  // release is stale: a dataflow task naming it is refused; in a lock-mode
  // list it is not checked (submissions never read the state) and at worst
  // excludes tasks of the resource that reuses the state.
  void release_resource(resource r);
  template <class F>
  auto submit_with_access(std::initializer_list<access> list, F&& f)
      -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class F>
  auto submit_with_access(std::initializer_list<access> list, F&& f, priority p)
      -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class F>
  auto submit_with_access(const std::vector<access>& list, F&& f)
      -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class F>
  auto submit_with_access(const std::vector<access>& list, F&& f, priority p)
      -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class F>
  void spawn_with_access(std::initializer_list<access> list, F&& f);
  template <class F>
  void spawn_with_access(std::initializer_list<access> list, F&& f, priority p);
  template <class F>
  void spawn_with_access(const std::vector<access>& list, F&& f);
  template <class F>
  void spawn_with_access(const std::vector<access>& list, F&& f, priority p);

  runtime_stats stats() const;
  detail::runtime_core& core() noexcept { return *m_core; }

 private:
  template <class F>
  detail::task* make_task(F&& f);
  template <class F>
  auto submit_access(const access* list, std::size_t n, F&& f, int prio)
      -> future<std::invoke_result_t<std::decay_t<F>&>>;
  template <class F>
  void spawn_access(const access* list, std::size_t n, F&& f, int prio);
  template <class B>
  void start_with_access(const access* list, std::size_t n, B&& body, int prio);
  template <class D>
  void start_access_request(const access* list, std::size_t n, D&& body, int prio);
  template <class T, class... Args>
  actor_ref<T> spawn_actor_on(affinity aff, int worker, Args&&... args);
  unsigned worker_of_node(numa_node n) const;
  void check_worker(worker_id w, const char* api) const;
  std::size_t tick_pass(bool refuse_hosted);
  void start_threads(std::vector<std::string>& errors);
  void stop_workers();  // shutdown's second half: stop, wake, join, wait for hosts
  std::size_t abandon_frames() noexcept;  // ~runtime after a failed shutdown

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
    t = detail::spawn_frame(*w);
    if constexpr (detail::k_boxed<F>) w->counters.boxed.add();
  } else {
    t = detail::external_frame(*m_core);
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
  check_worker(target, "submit_on");
  auto st = std::make_shared<detail::future_state<R>>(m_core.get());
  detail::task* t = make_task(detail::future_task<R, std::decay_t<F>>{st, std::forward<F>(f)});
  detail::submit_to_worker(*m_core, target.value, t);
  return future<R>(std::move(st));
}

template <class F>
auto runtime::submit_on(numa_node n, F&& f) -> future<std::invoke_result_t<std::decay_t<F>&>> {
  return submit_on(worker_id{worker_of_node(n)}, std::forward<F>(f));
}

}  // namespace strata
