// Moving a live actor to another worker, and the load monitor that asks
// for it.
//
// A move happens on the actor's worker, between two of its messages: the
// old slot starts forwarding, and an adopt task carrying the actor and its
// mailbox goes to the new worker's inbox. Every message that still arrives
// at the old address is forwarded through the same FIFO inbox, behind the
// adopt task, so nothing is reordered or lost (FIFO per sender holds).
//
// Senders keep the actor's home address (where it was spawned). A move
// from a slot other than the home tells the home, which shortens its chain
// back to one hop (forwarding.cpp): an actor moved a thousand times costs a
// message one forward, not a thousand, and the slots it left are reused.
#include <chrono>
#include <string>
#include <system_error>
#include <utility>

#include <strata/actors/actor.hpp>
#include <strata/runtime/task_group.hpp>
#include <strata/topology/ext/fault.hpp>

#include "actor_worker.hpp"

namespace strata::detail {
namespace {

// Runs on the new worker: takes over a migrated actor and its mailbox.
struct adopt_task {
  actor_system* sys;
  actor_base* actor;
  actor_factory* factory;
  task* mail_head;
  task* mail_tail;
  std::uint64_t home;
  std::uint32_t depth;
  std::uint32_t index;
  std::uint16_t gen;
  unsigned restarts;
  affinity aff;
  adopt_task(actor_system* s, actor_slot& from, std::uint32_t i, std::uint16_t g)
      : sys(s), actor(from.actor), factory(std::exchange(from.factory, nullptr)), mail_head(from.mail_head),
        mail_tail(from.mail_tail), home(from.home), depth(from.depth), index(i), gen(g), restarts(from.restarts),
        aff(from.aff) {}
  adopt_task(adopt_task&& o) noexcept
      : sys(o.sys), actor(o.actor), factory(o.factory), mail_head(o.mail_head), mail_tail(o.mail_tail),
        home(o.home), depth(o.depth), index(o.index), gen(o.gen), restarts(o.restarts), aff(o.aff) {
    o.actor = nullptr;
    o.factory = nullptr;
    o.mail_head = nullptr;
  }
  adopt_task(const adopt_task&) = delete;
  ~adopt_task() {
    // Never run (the runtime is going away): the actor dies, its mail too.
    if (factory != nullptr) {
      if (actor != nullptr) factory->destroy(actor);
      delete factory;
    }
    for (task* m = mail_head; m != nullptr;) {
      task* next = m->next.load(std::memory_order_relaxed);  // relaxed: private list
      if (m->destroy != nullptr) m->destroy(m);
      if (m->home == k_no_home) delete m;
      m = next;
    }
  }
  void operator()() {
    actor_worker& aw = sys->at(current_worker()->index);
    install(aw, index, gen, actor, std::unique_ptr<actor_factory>(factory), aff, home);
    actor_slot& s = *aw.table.find(index);
    s.restarts = restarts;
    s.mail_head = mail_head;
    s.mail_tail = mail_tail;
    s.depth = depth;
    actor = nullptr;
    factory = nullptr;
    mail_head = nullptr;
    if (s.mail_head != nullptr) schedule(aw, s);
  }
};

void finish_reply(const std::shared_ptr<future_state<bool>>& reply, bool v) noexcept {
  if (!reply) return;
  reply->value.emplace(v);
  reply->finish();
}

// Moves slot s (live, not running) to worker `to`.
bool move_slot(actor_worker& aw, actor_slot& s, unsigned to) {
  actor_system& sys = aw.sys;
  const auto [index, gen] = sys.at(to).take_move_slot();
  if (index >= actor_address::k_max_slots) return false;
  const std::uint64_t here = actor_address::make(sys.rank, aw.w.index, s.index, s.generation).bits();
  const std::uint64_t home = s.home;
  // The frames first (the adoption, and the refresh for the home when the
  // chain grows a hop): if they cannot be had, the actor is still here,
  // intact, and the target's slot goes back to its free list.
  task* t = nullptr;
  task* refresh = nullptr;
  try {
    t = detached_frame(aw);
    if (home != here) refresh = detached_frame(aw);
  } catch (...) {
    if (t != nullptr) free_frame(aw.w, t);
    try {
      sys.at(to).release_move_slot(index, gen);
    } catch (...) {
      // no memory for the list either: that slot stays unused
    }
    throw;
  }
  emplace_callable(t, adopt_task(&sys, s, index, gen));
  submit_to_worker(sys.core, to, t);  // to another worker: its inbox is FIFO behind this
  s.actor = nullptr;
  s.mail_head = s.mail_tail = nullptr;
  s.depth = 0;
  s.state = slot_state::forwarding;
  s.forward = actor_address::make(sys.rank, to, index, gen).bits();
  --aw.table.live;
  aw.counters.actors_live.set(aw.table.live);
  aw.counters.migrations_done.add();
  if (refresh != nullptr) {  // the chain from home grew a hop: the home shortens it
    actor_system* sp = &sys;
    auto fn = [sp, home] { refresh_home(sp->at(current_worker()->index), home); };
    static_assert(!k_boxed<decltype(fn)>, "built in the frame: no allocation after the move");
    emplace_callable(refresh, fn);
    submit_to_worker(sys.core, actor_address::from_bits(home).worker(), refresh);
  }
  return true;
}

// Every period: how much each worker did (tasks and messages executed).
// Skew: the busiest did more than twice the lightest plus 16, three
// periods in a row with the same busiest worker. Then the busiest is asked
// to move one elastic actor to the lightest worker, preferring one on its
// own NUMA node (a move there keeps the actor's memory close).
void monitor_loop(actor_system& sys, unsigned period_ms) {
  runtime_core& rt = sys.core;
  const std::size_t n = rt.workers.size();
  std::vector<std::uint64_t> last(n, 0), delta(n, 0);
  unsigned streak = 0;
  std::size_t last_busy = n;
  std::unique_lock lock(sys.monitor_mutex);
  while (!sys.monitor_stop) {
    sys.monitor_cv.wait_for(lock, std::chrono::milliseconds(period_ms));
    if (sys.monitor_stop) break;
    std::uint64_t actors = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t now = tasks_executed(*rt.workers[i]);  // its counters only grow
      delta[i] = now - last[i];
      last[i] = now;
      actors += sys.at(static_cast<unsigned>(i)).counters.actors_live.get();
    }
    if (actors < 2) {
      streak = 0;
      continue;
    }
    std::size_t busy = 0;
    for (std::size_t i = 1; i < n; ++i) {
      if (delta[i] > delta[busy]) busy = i;
    }
    std::size_t light = n;
    const int node = rt.plan.workers()[busy].numa_node;
    for (int pass = 0; pass < 2 && light == n; ++pass) {  // same node first
      for (std::size_t i = 0; i < n; ++i) {
        if (i == busy || (pass == 0 && rt.plan.workers()[i].numa_node != node)) continue;
        if (2 * delta[i] + 16 >= delta[busy]) continue;  // not light enough
        if (light == n || delta[i] < delta[light]) light = i;
      }
    }
    if (light == n) {
      streak = 0;
      continue;
    }
    streak = busy == last_busy ? streak + 1 : 1;
    last_busy = busy;
    if (streak < 3) continue;
    streak = 0;
    const auto to = static_cast<unsigned>(light);
    lock.unlock();
    try {
      auto* t = new task{};
      t->home = k_no_home;
      actor_system* s = &sys;
      emplace_callable(t, [s, to] { rebalance(s->at(current_worker()->index), to); });
      submit_to_worker(rt, static_cast<unsigned>(busy), t);
    } catch (...) {
      // shutting down: nothing to balance any more
    }
    lock.lock();
  }
}

}  // namespace

void migrate_actor(actor_worker& aw, actor_address a, unsigned to, const std::shared_ptr<future_state<bool>>& reply) {
  actor_slot* s = aw.table.find(a.slot());
  if (s == nullptr || s->generation != a.generation()) {
    finish_reply(reply, false);
    return;
  }
  if (s->state == slot_state::forwarding) {  // follow the chain
    const actor_address next = actor_address::from_bits(s->forward);
    actor_system* sys = &aw.sys;
    post_to(aw, next.worker(),
            [sys, next, to, reply] { migrate_actor(sys->at(current_worker()->index), next, to, reply); });
    return;
  }
  bool ok = false;
  try {
    ok = s->state == slot_state::live && s->aff == affinity::elastic && !s->running && to != aw.w.index &&
         to < aw.sys.core.workers.size() && move_slot(aw, *s, to);
  } catch (...) {
    ok = false;  // no memory for the move's frames: the actor stays here, and the answer says so
  }
  finish_reply(reply, ok);
}

void rebalance(actor_worker& aw, unsigned to) {
  actor_slot* best = nullptr;
  unsigned active = 0;
  std::uint64_t best_delta = 0;
  aw.table.for_each_live([&](actor_slot& s) {
    const std::uint64_t delta = s.handled - s.handled_seen;
    s.handled_seen = s.handled;
    if (delta == 0) return;
    ++active;
    if (s.aff != affinity::elastic || s.running) return;  // sticky actors are never proposed
    if (best == nullptr || delta > best_delta) {
      best = &s;
      best_delta = delta;
    }
  });
  // Moving the only busy actor would only move the hot spot.
  if (best == nullptr || active < 2) return;
  aw.counters.migrations_proposed.add();
  try {
    move_slot(aw, *best, to);
  } catch (...) {
    // no memory for the move's frames: the actor stays; the monitor may propose it again
  }
}

void start_monitor(actor_system& sys, unsigned period_ms) {
  if (period_ms == 0 || sys.core.workers.size() < 2) return;
  if (const int e = fault::fail_here(fault::site::thread_create); e != 0) {
    throw std::system_error(e, std::generic_category(), "std::thread");  // what std::thread throws
  }
  sys.monitor = std::thread(monitor_loop, std::ref(sys), period_ms);
}

void stop_monitor(actor_system& sys) noexcept {
  if (!sys.monitor.joinable()) return;
  {
    std::lock_guard lock(sys.monitor_mutex);
    sys.monitor_stop = true;
  }
  sys.monitor_cv.notify_all();
  sys.monitor.join();
}

}  // namespace strata::detail
