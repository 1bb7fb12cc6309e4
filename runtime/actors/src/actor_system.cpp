// The actor system of a runtime: attaching to the core, spawning, routing
// (design in actor.hpp and ext/actor_system.hpp).
#include <cstdio>
#include <string>

#include <strata/actors/actor.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/task_group.hpp>

#include "actor_worker.hpp"

namespace strata {

std::string actor_address::to_string() const {
  return "actor " + std::to_string(rank()) + ":" + std::to_string(worker()) + ":" + std::to_string(slot()) + "#" +
         std::to_string(generation());
}

future<bool> runtime::migrate_actor(actor_address a, worker_id to) {
  check_worker(to, "migrate_actor");
  detail::actor_system& sys = detail::actors_of(*m_core);
  if (!a.valid() || a.rank() != sys.rank || a.worker() >= num_workers()) {
    throw usage_error("strata::runtime::migrate_actor: " + a.to_string() + " is not an actor of this runtime");
  }
  auto st = std::make_shared<detail::future_state<bool>>(m_core.get());
  detail::actor_system* s = &sys;
  submit_on(worker_id{a.worker()}, [s, a, to, st] {
    detail::migrate_actor(s->at(detail::current_worker()->index), a, to.value, st);
  });
  return future<bool>(st);
}

namespace detail {

actor_system::actor_system(runtime_core& c) : core(c), budget(c.settings.actor_budget) {
  m_workers.resize(core.workers.size());
  sink = core.add_source([this](worker& w) {
    auto* aw = new actor_worker(*this, w);
    m_workers[w.index] = aw;
    return aw;
  });
  // The monitor is a thread of the runtime's own: none under engine::external
  // (the runtime starts no threads) or deterministic_seed (a fixed schedule),
  // and none under policy::pinned_mpsc (work stays where it was placed).
  // The sources above already point at this object, so the constructor may
  // not throw from here on: without its monitor thread the actors still run,
  // only unmigrated.
  if (!core.external_engine && !core.deterministic && core.settings.policy != policy::pinned_mpsc) {
    try {
      start_monitor(*this, core.settings.monitor_period_ms);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "strata: could not start the actor monitor thread (%s); actors will not migrate\n",
                   e.what());
    }
  }
}

actor_system::~actor_system() { stop_monitor(*this); }

void actor_system::on_shutdown() noexcept { stop_monitor(*this); }

void actor_system::add_stats(runtime_stats& s) const {
  for (auto& ws : s.workers) {
    const actor_counters& c = m_workers[ws.worker]->counters;
    ws.set_counter("actors", c.actors_live.get());
    ws.set_counter("messages_local", c.messages_local.get());
    ws.set_counter("messages_remote", c.messages_remote.get());
    ws.set_counter("mailbox_high_water", c.mailbox_high_water.get());
    ws.set_counter("dead_letters", c.dead_letters.get());
    ws.set_counter("actor_failures", c.actor_failures.get());
    ws.set_counter("migrations_proposed", c.migrations_proposed.get());
    ws.set_counter("migrations_done", c.migrations_done.get());
    ws.set_counter("forwards", c.forwards.get());
  }
}

actor_system& actors_of(runtime_core& rt) { return subsystem_of<actor_system>(rt); }

namespace {

// Runs on the target worker: installs an actor spawned by another thread.
// Owns the actor until then (a frame destroyed unrun frees it).
struct install_task {
  actor_system* sys;
  actor_base* actor;
  actor_factory* factory;
  std::uint32_t index;
  affinity aff;
  install_task(actor_system* s, actor_base* a, actor_factory* f, std::uint32_t i, affinity x)
      : sys(s), actor(a), factory(f), index(i), aff(x) {}
  install_task(install_task&& o) noexcept
      : sys(o.sys), actor(o.actor), factory(o.factory), index(o.index), aff(o.aff) {
    o.actor = nullptr;
    o.factory = nullptr;
  }
  install_task(const install_task&) = delete;
  ~install_task() {
    if (factory != nullptr) {
      if (actor != nullptr) factory->destroy(actor);
      delete factory;
    }
  }
  void operator()() {
    install(sys->at(current_worker()->index), index, 1, actor, std::unique_ptr<actor_factory>(factory), aff);
    actor = nullptr;
    factory = nullptr;
  }
};

void route_message(actor_system& sys, task* t, bool direct_on_home) {
  runtime_core& rt = sys.core;
  const actor_address a = actor_address::from_bits(t->tag);
  if (a.rank() != sys.rank || a.worker() >= rt.workers.size()) {
    const std::string who = a.to_string();
    if (t->destroy != nullptr) t->destroy(t);
    worker* w = current_worker();
    if (w != nullptr && w->rt == &rt) {
      free_frame(*w, t);
    } else {
      discard_external_frame(rt, t);  // make_message's, off the workers
    }
    throw usage_error("strata: " + who + " is not an actor of this runtime (rank " + std::to_string(sys.rank) + ", " +
                      std::to_string(rt.workers.size()) + " workers)");
  }
  worker* w = current_worker();
  if (direct_on_home && w != nullptr && w->rt == &rt && w->index == a.worker()) {
    send_local(sys.at(w->index), *w, t);
    return;
  }
  t->sink = static_cast<std::uint8_t>(sys.sink);
  submit_to_worker(rt, a.worker(), t);
}
}  // namespace

void send_message(actor_system& sys, task* t) { route_message(sys, t, true); }
void deliver_message(actor_system& sys, task* t) { route_message(sys, t, false); }

void deliver_received(actor_system& sys, task* t, bool in_batch) {
  const actor_address a = actor_address::from_bits(t->tag);
  worker* w = current_worker();
  if (in_batch && w != nullptr && w->rt == &sys.core && a.rank() == sys.rank && w->index == a.worker()) {
    // What is ahead of the batch in the inbox is delivered already, and the
    // batch's earlier messages went in just now: the mailbox order is the
    // arrival order. Counted as submit_to_worker would.
    w->counters.spawned.add();
    deliver(sys.at(w->index), t, true);
    return;
  }
  route_message(sys, t, false);
}

actor_address spawn_actor(actor_system& sys, spawn_request req) {
  runtime_core& rt = sys.core;
  const auto n = static_cast<unsigned>(rt.workers.size());
  sys.spawned.store(true, std::memory_order_relaxed);  // relaxed: see actor_system::spawned
  // relaxed: a round-robin counter.
  const unsigned target =
      req.worker >= 0 ? static_cast<unsigned>(req.worker) : sys.next_worker.fetch_add(1, std::memory_order_relaxed) % n;
  actor_worker& tw = sys.at(target);
  actor_base* a = req.factory->create(tw.w.memory);  // on the target's node
  worker* w = current_worker();
  if (w == &tw.w) {
    std::uint32_t index;
    try {
      index = tw.table.take_slot();
    } catch (...) {
      req.factory->destroy(a);
      throw;
    }
    actor_slot& s = tw.table.at(index);
    const std::uint16_t gen = s.generation == 0 ? 1 : s.generation;  // a freed slot already has its next generation
    install(tw, index, gen, a, std::move(req.factory), req.aff);
    return actor_address::make(sys.rank, target, index, gen);
  }
  // relaxed: uniqueness only; the install task orders the rest.
  const std::uint32_t index = tw.fresh_slots.fetch_add(1, std::memory_order_relaxed);
  if (index >= actor_address::k_max_slots) {
    req.factory->destroy(a);
    throw runtime_error("strata: worker " + std::to_string(target) + " has no free actor slot (" +
                        std::to_string(actor_address::k_max_slots) + " per worker)");
  }
  task* t = detached_frame(rt, w);
  emplace_callable(t, install_task(&sys, a, req.factory.release(), index, req.aff));
  submit_to_worker(rt, target, t);  // throws after shutdown (the frame's callable frees the actor)
  return actor_address::make(sys.rank, target, index, 1);
}

}  // namespace detail
}  // namespace strata
