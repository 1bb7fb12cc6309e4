// The dispatcher role: blocked lock-mode requests in queues per resource,
// re-evaluated when a releaser finds someone waiting; starting heap
// requests; running the chain of requests that releases let through
// (design in resource.hpp).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include <strata/access/resource.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include "access_system.hpp"
#include "locks.hpp"

namespace strata::detail {

void run_access(access_request* req) noexcept;

namespace {

using namespace lock_word;

std::set<access_request*, request_order>& queue_of(access_system& d, const resource_state* r) noexcept {
  return d.waiting[r->id - 1];
}

// Under d.mutex: a blocked request announces itself (+1) on every resource
// it asks for before its locked retry, and withdraws (-1) when it is
// dispatched. seq_cst: a releaser unlocks (seq_cst RMW) and then reads
// `waiters` (seq_cst); either it sees the announcement, or the retry sees
// its release (release_locks).
void announce(access_system& d, const access_request& req, int delta) noexcept {
  for (std::size_t i = 0; i < req.n_locks; ++i) {
    req.locks[i].res()->waiters.fetch_add(static_cast<std::uint32_t>(delta), std::memory_order_seq_cst);
  }
  d.blocked.fetch_add(static_cast<std::uint64_t>(static_cast<std::int64_t>(delta)), std::memory_order_relaxed);  // relaxed: statistic
}

// Under d.mutex: tries the requests waiting for resource r, highest
// priority first. Those that get all their locks go to `to_run`; one
// refused by another resource moves to that resource's queue (the
// redistribution). A refusal by r itself ends the pass when r is
// write-locked (nobody behind can pass), or after k_scan_refusals
// refusals while r is read-locked: the readers holding r will release it
// and look again, so a long queue is not rescanned on every release (a
// flood of tasks over few resources would make that quadratic). While
// r is free, the pass goes on (the requests it refuses wait for a writer
// that holds a ticket on r and will release r after it ran).
// Resources whose queues must be (re-)evaluated under the mutex: no
// duplicates.
using resource_work = std::vector<resource_state*>;
void add_work(resource_work& work, resource_state* r) {
  if (std::find(work.begin(), work.end(), r) == work.end()) work.push_back(r);
}
// A failed try that held its first `taken` locks for a moment and served
// its own writer registration on one of them: those resources' queues get
// another look. The ticket is gone, so requests it refused may pass now,
// and no release will follow (else two requests each refused by the
// other's ticket could wait forever with both resources free).
void add_taken(resource_work& work, const access_request& req, std::size_t taken) {
  for (std::size_t i = 0; i < taken; ++i) add_work(work, req.locks[i].res());
}

void reevaluate(access_system& d, resource_state& r, unsigned runner, std::vector<access_request*>& to_run,
                resource_work& work) {
  constexpr unsigned k_scan_refusals = 8;
  auto& q = queue_of(d, &r);
  unsigned refused = 0;
  for (auto it = q.begin(); it != q.end();) {
    access_request* req = *it;
    std::size_t taken = 0;
    bool cleared = false;
    resource_state* conflict = try_acquire_all(d, *req, runner, &taken, &cleared);
    if (cleared) add_taken(work, *req, taken);
    if (conflict == nullptr) {
      it = q.erase(it);
      announce(d, *req, -1);
      to_run.push_back(req);
      continue;
    }
    if (conflict == &r) {
      const std::uint32_t w = r.word.load(std::memory_order_seq_cst);
      if ((w & k_write) != 0) break;
      if (readers_of(w) != 0 && ++refused >= k_scan_refusals) break;
      ++it;
      continue;
    }
    auto next = std::next(it);
    queue_of(d, conflict).insert(q.extract(it));  // the node moves: no allocation under the mutex
    it = next;
  }
}

// Under d.mutex: evaluates the queues in `work` and those that the passes
// add, at most k_passes passes (each pass either lets a task through,
// moves one, or stops at a refusal; the bound keeps a pathological cycle
// of momentary holds from spinning under the mutex).
void reevaluate_all(access_system& d, resource_work& work, unsigned runner, std::vector<access_request*>& to_run) {
  constexpr unsigned k_passes = 64;
  for (unsigned pass = 0; pass < k_passes && !work.empty(); ++pass) {
    resource_state* r = work.front();
    work.erase(work.begin());
    reevaluate(d, *r, runner, to_run, work);
  }
}

// A request that holds locks (or a queue that misses one) cannot be put
// aside without blocking other tasks forever: say so and stop rather than
// hang.
[[noreturn]] void out_of_memory(const char* what) noexcept {
  std::fprintf(stderr, "strata: out of memory while %s; stopping (a lost lock-mode task would hang its resources)\n", what);
  std::abort();
}

struct access_launch {
  access_request* req;
  void operator()() const noexcept { run_access(req); }
};

// A frame that runs req: from the calling worker's pool, else from the
// calling thread's lane (or the heap: ext/submit.hpp).
task* launch_frame(runtime_core& rt, access_request* req) {
  worker* w = current_worker();
  task* t = w != nullptr && w->rt == &rt ? frame_for(rt, w) : external_frame(rt);
  t->group = nullptr;
  t->how = completion::detached;
  emplace_callable(t, access_launch{req});
  return t;
}

// Runs requests whose locks a dispatcher took for them. A worker that
// released locks (or ran a refused task) pushes them on its own deque: it
// just had the resources in its cache and pops them next; thieves take
// them when it is busy. At submission they go to another worker's inbox
// (round robin): the submitter may be a long loop that would sit on them
// while they hold their locks.
void dispatch(access_system& d, const std::vector<access_request*>& to_run, bool at_submit) {
  runtime_core& rt = d.core;
  worker* w = current_worker();
  if (w != nullptr && w->rt != &rt) w = nullptr;
  const auto n = static_cast<unsigned>(rt.workers.size());
  for (access_request* r : to_run) {
    r->held = true;
    task* t = launch_frame(rt, r);
    if (w != nullptr && !at_submit) {
      // Quietly: this worker pops it next. Waking an idle worker for the
      // one task a release let through made a chain of conflicting tasks
      // (a hot account) pay a futex wake-up and a steal per link.
      w->deque.push(t);
      w->counters.spawned.add();
      continue;
    }
    // relaxed: a round-robin counter.
    unsigned target = d.next_worker.fetch_add(1, std::memory_order_relaxed) % n;
    if (w != nullptr && target == w->index && n > 1) target = (target + 1) % n;
    // Off the workers only at submission, by a submitter that start_access
    // admitted: shutdown waits for it, so this cannot be refused.
    submit_to_worker(rt, target, t, w == nullptr);
  }
  // More than one let through (readers, or tasks on other resources): the
  // others are for idle workers.
  if (w != nullptr && !at_submit && (to_run.size() > 1 || w->deque.requested())) publish_and_wake(*w);
}

// The dispatcher's slow path for a request that is (or looks) refused:
// under the mutex, announce, retry all or none, and queue it at the
// refusing resource if that fails. `at_submit`: called by the submitter
// (see dispatch). `taken` locks were held for a moment by a try without
// the mutex: a re-evaluation that ran meanwhile may have stopped at one of
// them, so their queues are looked at again.
void block(access_system& d, access_request* req, unsigned runner, std::size_t taken, bool at_submit) {
  std::vector<access_request*> to_run;
  {
    std::lock_guard lock(d.mutex);
    // Its age and writer ticket: from when it first met the dispatcher (a
    // task that never waits needs neither, and pays no shared counter).
    if (req->ticket == 0) {
      const std::uint64_t seq = d.next_seq.fetch_add(1, std::memory_order_relaxed);  // relaxed: under the mutex
      req->seq = seq;
      req->ticket = static_cast<std::uint16_t>((seq & 0x7fff) | 1);
    }
    // Announce before the retry, so a releaser that released after our
    // failed try sees waiters > 0 and re-evaluates (see announce).
    announce(d, *req, +1);
    resource_work work;
    add_taken(work, *req, taken);
    std::size_t retry_taken = 0;
    bool cleared = false;
    if (resource_state* conflict = try_acquire_all(d, *req, runner, &retry_taken, &cleared)) {
      if (cleared) add_taken(work, *req, retry_taken);
      if (worker* w = current_worker(); w != nullptr && w->rt == &d.core) d.counters_of(w->index).queued.add();
      // Usually the youngest of its priority: the hint makes that insert
      // constant time (a queue behind a hot resource holds thousands).
      auto& q = queue_of(d, conflict);
      q.emplace_hint(q.end(), req);
    } else {
      announce(d, *req, -1);
      to_run.push_back(req);
    }
    reevaluate_all(d, work, runner, to_run);
  }
  dispatch(d, to_run, at_submit);
}

// True when a blocked request asks for one of locks[0..n): read after
// those locks were released (or held for a moment).
bool anyone_waits(const access_lock* locks, std::size_t n) noexcept {
  bool waited = false;
  for (std::size_t i = 0; i < n; ++i) {
    // seq_cst: after the releases (see announce).
    waited = waited || locks[i].res()->waiters.load(std::memory_order_seq_cst) != 0;
  }
  return waited;
}

// Someone waits for one of locks[0..n): re-evaluates the queues of those
// resources (under the mutex) and runs what they let through. With
// `continue_here`, the first request let through is returned for the
// caller to run next, in place (its locks are held for it).
[[gnu::noinline]] access_request* reevaluate_released(worker& w, const access_lock* locks, std::size_t n,
                                                      bool continue_here) noexcept {
  access_system& d = system_of(locks);
  try {
    std::vector<access_request*> to_run;
    {
      std::lock_guard lock(d.mutex);
      resource_work work;
      for (std::size_t i = 0; i < n; ++i) add_work(work, locks[i].res());
      reevaluate_all(d, work, w.index, to_run);
    }
    access_request* next = nullptr;
    if (continue_here && !to_run.empty()) {
      next = to_run.front();
      next->held = true;
      to_run.erase(to_run.begin());
    }
    dispatch(d, to_run, false);
    return next;
  } catch (const std::bad_alloc&) {
    out_of_memory("re-evaluating blocked lock-mode tasks");
  }
}

// After the task ran: releases its locks, then re-evaluates what waits for
// them. A release nobody waits for takes no mutex (and no call): with a few
// hot resources, the others' releases stay off it.
access_request* release_locks(worker& w, const access_lock* locks, std::size_t n, bool continue_here) noexcept {
  for (std::size_t i = n; i-- > 0;) unlock(*locks[i].res(), locks[i].mode());
  if (!anyone_waits(locks, n)) return nullptr;
  return reevaluate_released(w, locks, n, continue_here);
}

}  // namespace

void start_access(runtime_core& rt, access_request* req) {
  access_system& d = system_of(req->locks);
  worker* w = current_worker();
  const bool on_worker = w != nullptr && w->rt == &rt;
  if (!on_worker) {
    // Admitted once for the whole submission: shutdown waits until it is
    // queued or handed to a worker, so no step below can be refused while
    // the request holds locks (a retry that got the locks, then a refused
    // hand-over, would leak them and hang shutdown).
    try {
      admit_external(rt);
    } catch (...) {
      req->drop(req);
      throw;
    }
  }
  struct leave {
    runtime_core* rt;
    ~leave() {
      if (rt != nullptr) end_external(*rt);
    }
  } admitted{on_worker ? nullptr : &rt};
  // Counted before anything can run it (wait_idle: submitted, then released).
  d.count(false);
  // relaxed: a hint (see access_system::admission).
  if (looks_busy(req->locks, req->n_locks) && d.blocked.load(std::memory_order_relaxed) < d.admission) {
    try {
      block(d, req, on_worker ? w->index : 0, 0, true);
    } catch (const std::bad_alloc&) {
      out_of_memory("queueing a lock-mode task at submission");
    }
    return;
  }
  // Its locks look free (or the queues are long): a plain spawn; the
  // worker that runs it takes the locks (run_access). No helping here
  // (running an older task inside the submission): the submitter may hold
  // locks or mutexes that task needs, so a loop of many submissions in one
  // task keeps them pending until workers take them.
  task* t;
  try {
    t = launch_frame(rt, req);
  } catch (...) {
    req->drop(req);
    d.count(true);  // it never existed for wait_idle (after its body is destroyed)
    throw;
  }
  if (on_worker) {
    push_local(*w, t);
    return;
  }
  try {
    submit_external(rt, t, true);
  } catch (...) {                  // the injector could not take it (no memory): nothing ran
    discard_external_frame(rt, t);  // launch_frame's off the workers; its callable is trivial
    req->drop(req);
    d.count(true);
    throw;
  }
}

void run_access(access_request* req) noexcept {
  worker& w = *current_worker();
  access_system& d = system_of(req->locks);
  if (!req->held) {
    std::size_t taken = 0;
    if (try_acquire_all(d, *req, w.index, &taken) != nullptr) {
      try {
        block(d, req, w.index, taken, false);
      } catch (const std::bad_alloc&) {
        out_of_memory("queueing a blocked lock-mode task");
      }
      return;
    }
  }
  run_access_chain(w, req);
}

// A chain of tasks on a busy resource (a hot account) runs here, one after
// the other, each let through by the release of the one before: no frame,
// no deque, no wake-up per link. A task let through and pushed instead
// could sit under a submitter's fresh tasks holding its locks, and every
// task on its resources would queue behind it. At most k_chain links, then
// the worker goes back to its other work.
void run_access_chain(worker& w, access_request* req) noexcept {
  constexpr unsigned k_chain = 64;
  access_counters& counters = system_of(req->locks).counters_of(w.index);
  for (unsigned link = 1;; ++link) {
    req->invoke(req);
    // Before the future is ready: a waiter may submit conflicting work next.
    access_request* next = release_locks(w, req->locks, req->n_locks, link < k_chain);
    req->complete(req);  // frees req
    // After the body was destroyed (wait_idle must not return while a
    // capture's destructor runs) and after the dispatches above were
    // counted as spawns (release).
    counters.released.add();
    if (next == nullptr) return;
    req = next;
  }
}

void block_frame(worker& w, access_request* req, std::size_t taken) noexcept {
  // Counted before it can run (wait_idle: submitted, then released); the
  // frame it leaves is counted executed only after this returns.
  access_system& d = system_of(req->locks);
  d.counters_of(w.index).submitted.add();
  try {
    block(d, req, w.index, taken, false);
  } catch (const std::bad_alloc&) {
    out_of_memory("queueing a blocked lock-mode task");
  }
}

access_request* serve_after_release(worker& w, access_head& head) noexcept {
  return reevaluate_released(w, head.locks, head.n, true);
}

void abandon_refused_frame(worker& w, access_head& head, std::size_t taken) noexcept {
  // The first `taken` locks were held for a moment by the refused try: a
  // re-evaluation that ran meanwhile may have stopped at one of them, and
  // no release of ours will follow, so look again, as block() does for a
  // request that does get queued.
  if (anyone_waits(head.locks, taken)) reevaluate_released(w, head.locks, taken, false);
}

bool queues_admit(const access_system& d) noexcept {
  // relaxed: a hint (see access_system::admission).
  return d.blocked.load(std::memory_order_relaxed) < d.admission;
}

void report_detached_access_exception(std::exception_ptr e) noexcept {
  report_detached_exception(*current_worker(), std::move(e));
}

}  // namespace strata::detail
