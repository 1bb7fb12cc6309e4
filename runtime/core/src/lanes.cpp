// External lanes (design in lanes.hpp): taking a lane, submitting on it,
// workers taking from it.
#include "lanes.hpp"

#include <sched.h>

#include <string>
#include <vector>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/assert.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/task_group.hpp>

#include "parking.hpp"

namespace strata::detail {
namespace {

constexpr std::int64_t k_lane_batch = 32;  // tasks a worker takes from a lane at once, at most

// The lanes this thread holds, one per runtime it submitted to. On thread
// exit every lane is handed back (held = false).
struct thread_lanes {
  struct entry {
    std::uint64_t runtime_id;
    external_lane* lane;  // nullptr: that runtime had no lane free; valid while the runtime lives
    std::shared_ptr<lane_claim> claim;
  };
  std::vector<entry> entries;
  ~thread_lanes() {
    for (auto& e : entries) {
      if (e.claim) e.claim->held.store(false, std::memory_order_release);  // release: pairs with take_lane's acquire
    }
  }
};

thread_local thread_lanes t_lanes;
// The last lookup, for the common case of one runtime per thread.
thread_local std::uint64_t t_last_id = 0;
thread_local external_lane* t_last_lane = nullptr;

unsigned worker_near_caller(const runtime_core& rt) noexcept {
  const int cpu = sched_getcpu();
  if (cpu < 0 || static_cast<std::size_t>(cpu) >= rt.node_of_cpu.size()) return 0;
  const int node = rt.node_of_cpu[static_cast<std::size_t>(cpu)];
  for (const auto& p : rt.plan.workers()) {
    if (p.numa_node == node) return p.worker;
  }
  return 0;
}

// A lane whose thread is gone, or a new one; nullptr when all are taken.
external_lane* take_lane(runtime_core& rt) {
  std::lock_guard lock(rt.lane_mutex);
  for (auto& l : rt.owned_lanes) {
    // acquire: pairs with the exiting holder's release; its pushes and pool
    // state happen before our use as the next owner.
    if (!l->claim->held.load(std::memory_order_acquire)) {
      l->claim = std::make_shared<lane_claim>();  // a fresh claim: the old holder may still drop its own
      l->near = worker_near_caller(rt);
      return l.get();
    }
  }
  const unsigned index = rt.num_lanes.load(std::memory_order_relaxed);  // relaxed: written under lane_mutex
  if (index == runtime_core::k_max_lanes) return nullptr;
  rt.owned_lanes.push_back(
      std::make_unique<external_lane>(index, static_cast<std::uint32_t>(rt.workers.size() + index)));
  external_lane* l = rt.owned_lanes.back().get();
  l->near = worker_near_caller(rt);
  rt.lanes[index] = l;
  rt.num_lanes.store(index + 1, std::memory_order_release);  // release: publishes lanes[index] to the workers
  return l;
}

[[noreturn]] void refuse() {
  throw runtime_error("strata: the runtime is shutting down or shut down; it takes no new tasks");
}

// The calling thread's lane of rt, whatever the policy (taken on first use,
// then cached); nullptr when none is free.
external_lane* thread_lane(runtime_core& rt) {
  if (t_last_id == rt.id) return t_last_lane;
  external_lane* found = nullptr;
  bool known = false;
  auto& entries = t_lanes.entries;
  for (std::size_t i = 0; i < entries.size();) {
    if (entries[i].runtime_id == rt.id) {
      found = entries[i].lane;
      known = true;
      ++i;
    } else if (entries[i].claim && entries[i].claim->runtime_gone.load(std::memory_order_acquire)) {
      entries[i] = std::move(entries.back());  // acquire: pairs with ~runtime_core's release
      entries.pop_back();
    } else {
      ++i;
    }
  }
  if (!known) {
    found = take_lane(rt);
    entries.push_back({rt.id, found, found != nullptr ? found->claim : nullptr});
  }
  t_last_id = rt.id;
  t_last_lane = found;
  return found;
}

}  // namespace

external_lane* caller_lane(runtime_core& rt) {
  if (rt.deterministic) return nullptr;  // one fixed schedule: the injector path, as before lanes
  if (!rt.steals) return nullptr;        // pinned_mpsc, hybrid: submissions go round robin (policy.cpp)
  return thread_lane(rt);
}

task* external_frame(runtime_core& rt) {
  if (external_lane* l = caller_lane(rt)) {
    l->deque.reserve_one();  // as spawn_frame: submit_on_lane's push cannot fail
    return l->pool.allocate();
  }
  task* t = new task{};
  t->home = k_no_home;
  return t;
}

task* external_routed_frame(runtime_core& rt) {
  // Under every policy: the frame goes to an inbox, never to the lane's
  // deque, so a lane that workers do not scan (pinned_mpsc, hybrid) still
  // lends its pool. Not under deterministic_seed, which keeps the heap.
  external_lane* l = rt.deterministic ? nullptr : thread_lane(rt);
  if (l != nullptr) return l->pool.allocate();
  task* t = new task{};
  t->home = k_no_home;
  return t;
}

void discard_external_frame(runtime_core& rt, task* t) noexcept {
  if (t->home == k_no_home) {
    delete t;
    return;
  }
  STRATA_ASSERT(t->home >= rt.workers.size() && t->home - rt.workers.size() < rt.num_lanes.load(),
                "an external frame comes from a lane's pool");
  rt.lanes[t->home - rt.workers.size()]->pool.free_local(t);
}

void submit_on_lane(runtime_core& rt, external_lane& l, task* t, bool admitted) {
  if (!admitted) {
    if constexpr (k_tsan) {
      l.submitting.store(1, std::memory_order_seq_cst);  // TSAN does not model fences: seq_cst store and load
    } else {
      l.submitting.store(1, std::memory_order_relaxed);  // relaxed: ordered by the fence below
      // seq_cst fence: Dekker with shutdown (store accepting = false, then
      // read every lane's submitting), see lanes.hpp.
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
    if (!rt.accepting.load(std::memory_order_seq_cst)) {
      l.submitting.store(0, std::memory_order_relaxed);  // relaxed: nothing was published
      if (t->destroy != nullptr) t->destroy(t);
      discard_external_frame(rt, t);
      refuse();
    }
  }
  // Counted before it can run: wait_idle must never see its execution
  // without its creation (the counter's release store, then the publish).
  l.created.add();
  l.deque.push(t);
  l.deque.publish_all();
  // release: the count above before shutdown's seq_cst read of 0.
  if (!admitted) l.submitting.store(0, std::memory_order_release);
  maybe_wake(rt, l.near);
}

task* take_from_lanes(worker& w) noexcept {
  runtime_core& rt = *w.rt;
  const unsigned n = rt.num_lanes.load(std::memory_order_acquire);  // acquire: pairs with take_lane's release
  if (n == 0) return nullptr;
  for (unsigned j = 0; j < n; ++j) {
    // Start one lane further each time, so that every lane is served.
    external_lane& l = *rt.lanes[(w.lane_cursor + j) % n];
    if (l.thieves.shared_size() == 0) continue;  // a racy estimate: skip the steal's fence for an empty lane
    auto r = l.thieves.steal();
    if (!r) continue;
    w.lane_cursor = (w.lane_cursor + j + 1) % n;
    w.counters.from_lanes.add();
    std::int64_t more = l.thieves.shared_size() / 2;
    if (more > k_lane_batch - 1) more = k_lane_batch - 1;
    for (std::int64_t i = 0; i < more; ++i) {
      auto extra = l.thieves.steal();
      if (!extra) break;
      w.counters.from_lanes.add();
      w.deque.push(extra.value);  // moved, not created: private, shared again on request
    }
    if (more > 0 && (w.deque.requested() || w.idle->word.load(std::memory_order_relaxed) != 0)) {  // relaxed: hint
      publish_and_wake(w);
    }
    return r.value;
  }
  return nullptr;
}

frame_pool& pool_of_home(runtime_core& rt, std::uint32_t home) noexcept {
  const std::size_t n = rt.workers.size();
  if (home < n) return rt.workers[home]->pool;
  STRATA_ASSERT(home - n < rt.num_lanes.load(std::memory_order_relaxed), "a frame's home is a worker or a lane");
  return rt.lanes[home - n]->pool;
}

std::uint64_t lanes_created(const runtime_core& rt) noexcept {
  const unsigned n = rt.num_lanes.load(std::memory_order_acquire);  // acquire: pairs with take_lane's release
  std::uint64_t sum = 0;
  for (unsigned i = 0; i < n; ++i) sum += rt.lanes[i]->created.get();
  return sum;
}

void wait_lane_submitters(const runtime_core& rt) noexcept {
  // seq_cst: with submit_on_lane's fence, a lane taken before that fence is seen here.
  const unsigned n = rt.num_lanes.load(std::memory_order_seq_cst);
  for (unsigned i = 0; i < n; ++i) {
    // seq_cst: Dekker with submit_on_lane (after shutdown's store of accepting).
    while (rt.lanes[i]->submitting.load(std::memory_order_seq_cst) != 0) sched_yield();
  }
}

}  // namespace strata::detail
