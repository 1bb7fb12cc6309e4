// Lock mode: acquiring all of a task's locks or none, blocked queues per
// holder, re-evaluation on release (design in resource.hpp).
#include <algorithm>
#include <string>

#include <strata/runtime/resource.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include "resource_dispatch.hpp"

namespace strata {

namespace detail {
namespace {

constexpr std::uint32_t k_write = 1u << 31;
constexpr std::uint32_t k_reader = 1u << 24;
constexpr std::uint32_t k_readers_mask = 0x7fu << 24;
constexpr std::uint32_t k_max_readers = 127;
constexpr std::uint32_t k_holder_shift = 16;
constexpr std::uint32_t k_holder_mask = 0xffu << 16;
constexpr std::uint32_t k_ticket_mask = 0xffffu;

std::uint32_t readers_of(std::uint32_t w) noexcept { return (w & k_readers_mask) >> 24; }
unsigned holder_of(std::uint32_t w) noexcept { return (w & k_holder_mask) >> k_holder_shift; }
std::uint32_t with_holder(std::uint32_t w, unsigned h) noexcept {
  return (w & ~k_holder_mask) | ((static_cast<std::uint32_t>(h) & 0xffu) << k_holder_shift);
}

access_dispatcher& dispatcher_of(runtime_core& rt) noexcept { return *rt.access; }

// One lock, no waiting. The holder byte is set only when the lock goes from
// free to held, so it names the same worker for as long as it is held
// (releases re-evaluate that worker's queue). All CAS are seq_cst: they
// pair with each other and with the seq_cst `blocked` announcement (see
// release_access).
bool try_lock(const access_dispatcher& d, resource_state& r, access_mode mode, unsigned holder,
              std::uint16_t ticket) noexcept {
  std::uint32_t w = r.word.load(std::memory_order_seq_cst);
  for (;;) {
    if (mode == access_mode::write) {
      if ((w & k_write) != 0 || readers_of(w) != 0) {
        // Register as the waiting writer (readers then front-run at most d.front_runs times).
        if ((w & k_ticket_mask) == 0 &&
            !r.word.compare_exchange_weak(w, w | ticket, std::memory_order_seq_cst, std::memory_order_seq_cst)) {
          continue;
        }
        return false;
      }
      std::uint32_t next = with_holder(w | k_write, holder);
      if ((w & k_ticket_mask) == ticket) next &= ~k_ticket_mask;  // our registration is served
      if (r.word.compare_exchange_weak(w, next, std::memory_order_seq_cst, std::memory_order_seq_cst)) {
        r.front_runs.store(0, std::memory_order_relaxed);  // relaxed: read under the same word's protocol
        return true;
      }
      continue;
    }
    if ((w & k_write) != 0 || readers_of(w) == k_max_readers) return false;
    const bool writer_waits = (w & k_ticket_mask) != 0;
    if (writer_waits) {
      // relaxed: the count is a budget; the CAS on the word below decides.
      std::uint32_t f = r.front_runs.load(std::memory_order_relaxed);
      do {
        if (f >= d.front_runs) return false;
      } while (!r.front_runs.compare_exchange_weak(f, f + 1, std::memory_order_relaxed));
    }
    const std::uint32_t next = readers_of(w) == 0 ? with_holder(w + k_reader, holder) : w + k_reader;
    if (r.word.compare_exchange_weak(w, next, std::memory_order_seq_cst, std::memory_order_seq_cst)) return true;
    if (writer_waits) r.front_runs.fetch_sub(1, std::memory_order_relaxed);  // relaxed: give the budget back
  }
}

// Returns the holder byte of w's lock before the release.
unsigned unlock(resource_state& r, access_mode mode) noexcept {
  if (mode == access_mode::read) {
    return holder_of(r.word.fetch_sub(k_reader, std::memory_order_seq_cst));  // seq_cst: see release_access
  }
  std::uint32_t w = r.word.load(std::memory_order_seq_cst);
  while (!r.word.compare_exchange_weak(w, w & ~k_write, std::memory_order_seq_cst, std::memory_order_seq_cst)) {
  }
  return holder_of(w);
}

// All or none. On failure returns the resource that refused; *taken (if
// given) is the number of locks that were held for a moment and given back.
resource_state* try_acquire_all(const access_dispatcher& d, access_request& req, unsigned holder,
                                std::size_t* taken = nullptr) noexcept {
  for (std::size_t i = 0; i < req.locks.size(); ++i) {
    auto& l = req.locks[i];
    if (!try_lock(d, *l.res, l.mode, holder, req.ticket)) {
      for (std::size_t j = i; j-- > 0;) unlock(*req.locks[j].res, req.locks[j].mode);
      if (taken != nullptr) *taken = i;
      return l.res;
    }
  }
  req.holder = holder;
  return nullptr;
}

std::set<access_request*, request_order>& queue_of(access_dispatcher& d, const resource_state* r) noexcept {
  return d.waiting[r->id - 1];
}

void dispatch(runtime_core& rt, access_request* req) {
  rt.access->in_flight.fetch_add(1, std::memory_order_relaxed);  // relaxed: a load-control estimate
  submit_to_worker(rt, req->holder, req->frame);
}

// Under d.mutex: starts deferred requests while there is room in flight;
// one a lock refuses waits in that resource's queue instead.
void pull_deferred(access_dispatcher& d, unsigned runner, std::vector<access_request*>& to_run) {
  std::uint64_t room = d.in_flight_cap;
  const std::uint64_t busy = d.in_flight.load(std::memory_order_relaxed) + to_run.size();  // relaxed: estimate
  room = busy < room ? room - busy : 0;
  while (room > 0 && !d.deferred.empty()) {
    access_request* req = *d.deferred.begin();
    d.deferred.erase(d.deferred.begin());
    if (resource_state* conflict = try_acquire_all(d, *req, runner)) {
      queue_of(d, conflict).insert(req);  // still counted in `blocked`
      continue;
    }
    d.blocked.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: the announcement's pair
    to_run.push_back(req);
    --room;
  }
}

// Under d.mutex: tries the requests waiting for resource r, highest
// priority first. Those that get all their locks go to `to_run`; one
// refused by another resource moves to that resource's queue (seed 004's
// redistribution); a refusal by r itself ends the pass when r is
// write-locked (nobody behind can pass). Work per release: the tasks
// started, the tasks moved, and the ones r refuses while it is read-locked.
void reevaluate(access_dispatcher& d, resource_state& r, unsigned runner, std::vector<access_request*>& to_run) {
  auto& q = queue_of(d, &r);
  for (auto it = q.begin(); it != q.end();) {
    access_request* req = *it;
    resource_state* conflict = try_acquire_all(d, *req, runner);
    if (conflict == nullptr) {
      it = q.erase(it);
      d.blocked.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: the announcement's pair
      to_run.push_back(req);
      continue;
    }
    if (conflict == &r) {
      // Write-locked: nobody behind can pass. Otherwise (read-locked, or a
      // reader refused by the front-run budget) a writer or reader further
      // back may still pass.
      if ((r.word.load(std::memory_order_seq_cst) & k_write) != 0) break;
      ++it;
      continue;
    }
    it = q.erase(it);
    queue_of(d, conflict).insert(req);
  }
}

void destroy_frame(task* t) noexcept {
  if (t->destroy != nullptr) t->destroy(t);
  if (t->home == k_no_home) {
    delete t;
  } else if (worker* w = current_worker(); w != nullptr) {
    free_frame(*w, t);
  }
}

}  // namespace

void submit_access(runtime_core& rt, std::unique_ptr<access_request> req, const access* list, std::size_t n) {
  auto fail = [&](const std::string& why) {
    destroy_frame(req->frame);
    throw usage_error("strata::runtime::submit_with_access: " + why);
  };
  if (n == 0) fail("empty access list; accepted: one or more read(r) / write(r)");
  req->locks.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    resource_state* s = list[i].res.state();
    if (s == nullptr) fail("access " + std::to_string(i) + " names an empty resource (default-constructed)");
    if (s->owner != &rt) fail("resource " + std::to_string(s->id) + " belongs to another runtime");
    req->locks.push_back({s, list[i].mode});
  }
  std::sort(req->locks.begin(), req->locks.end(), [](const auto& a, const auto& b) { return a.res->id < b.res->id; });
  for (std::size_t i = 1; i < req->locks.size(); ++i) {
    if (req->locks[i].res == req->locks[i - 1].res) {
      fail("resource " + std::to_string(req->locks[i].res->id) +
           " appears twice in one access list; accepted: each resource once (write(r) covers reading it)");
    }
  }
  access_dispatcher& d = dispatcher_of(rt);
  const std::uint64_t seq = d.next_seq.fetch_add(1, std::memory_order_relaxed);  // relaxed: an age stamp
  req->seq = seq;
  req->ticket = static_cast<std::uint16_t>((seq & 0x7fff) | 1);
  // relaxed: a round-robin counter.
  const unsigned runner = d.next_worker.fetch_add(1, std::memory_order_relaxed) % static_cast<unsigned>(rt.workers.size());
  rt.lock_tasks_pending.fetch_add(1, std::memory_order_release);  // release: wait_idle counts it
  access_request* r = req.release();
  std::size_t taken = 0;
  // relaxed: a load-control estimate.
  const bool room = d.in_flight.load(std::memory_order_relaxed) < d.in_flight_cap;
  if (room && try_acquire_all(d, *r, runner, &taken) == nullptr) {
    dispatch(rt, r);
    return;
  }
  std::vector<access_request*> to_run;
  {
    std::lock_guard lock(d.mutex);
    // seq_cst: announce before the retry, so a releaser that released after
    // our failed try sees blocked > 0 and re-evaluates (pairs with the
    // seq_cst release and load in release_access).
    d.blocked.fetch_add(1, std::memory_order_seq_cst);
    if (!room && d.in_flight.load(std::memory_order_seq_cst) >= d.in_flight_cap) {
      // Every in-flight task will pull from `deferred` when it finishes.
      d.deferred.insert(r);
      return;
    }
    resource_state* conflict = try_acquire_all(d, *r, runner);
    if (conflict != nullptr) {
      queue_of(d, conflict).insert(r);
    } else {
      d.blocked.fetch_sub(1, std::memory_order_seq_cst);
      to_run.push_back(r);
    }
    // The failed try above held some locks for a moment without the mutex:
    // a re-evaluation that ran meanwhile may have stopped at one of them.
    // Look at those queues again.
    for (std::size_t i = 0; i < taken; ++i) reevaluate(d, *r->locks[i].res, runner, to_run);
  }
  for (access_request* x : to_run) dispatch(rt, x);
}

void release_access(access_request* req) noexcept {
  worker* w = current_worker();
  runtime_core& rt = *w->rt;
  access_dispatcher& d = dispatcher_of(rt);
  for (auto it = req->locks.rbegin(); it != req->locks.rend(); ++it) unlock(*it->res, it->mode);
  d.in_flight.fetch_sub(1, std::memory_order_seq_cst);  // seq_cst: submitters decide on it under the mutex
  // seq_cst: after the releases above (pairs with the announcement in submit_access).
  if (d.blocked.load(std::memory_order_seq_cst) != 0) {
    std::vector<access_request*> to_run;
    {
      std::lock_guard lock(d.mutex);
      for (auto& l : req->locks) reevaluate(d, *l.res, w->index, to_run);
      pull_deferred(d, w->index, to_run);
    }
    for (access_request* r : to_run) dispatch(rt, r);  // here: the resources are hot in this core's cache
  }
  delete req;
  rt.lock_tasks_pending.fetch_sub(1, std::memory_order_release);  // release: wait_idle's acquire sees the work
}

}  // namespace detail

std::uint32_t resource::id() const noexcept { return m_state != nullptr ? m_state->id : 0; }

resource runtime::make_resource() {
  auto& d = *m_core->access;
  std::lock_guard lock(d.create_mutex);
  auto& s = d.resources.emplace_back();
  s.id = static_cast<std::uint32_t>(d.resources.size());
  s.owner = m_core.get();
  std::lock_guard queues(d.mutex);  // the dispatcher reads `waiting` under it
  d.waiting.emplace_back();
  return resource(&s);
}

}  // namespace strata
