// Actors: spawning, routing, mailboxes, turns, failures (design in
// actor.hpp and actor_table.hpp). Everything that touches an actor_table
// runs on the table's own worker.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

#include <strata/runtime/actor.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

#include "actor_table.hpp"
#include "worker_loop.hpp"

namespace strata {

std::string actor_address::to_string() const {
  return "actor " + std::to_string(rank()) + ":" + std::to_string(worker()) + ":" + std::to_string(slot()) + "#" +
         std::to_string(generation());
}

future<bool> runtime::migrate_actor(actor_address a, worker_id to) {
  if (to.value >= num_workers()) {
    throw usage_error("strata::runtime::migrate_actor: worker " + std::to_string(to.value) +
                      " does not exist (workers 0.." + std::to_string(num_workers() - 1) + ")");
  }
  if (!a.valid() || a.rank() != m_core->rank || a.worker() >= num_workers()) {
    throw usage_error("strata::runtime::migrate_actor: " + a.to_string() + " is not an actor of this runtime");
  }
  auto st = std::make_shared<detail::future_state<bool>>(m_core.get());
  submit_on(worker_id{a.worker()}, [a, to, st] { detail::migrate_actor(*detail::current_worker(), a, to.value, st); });
  return future<bool>(st);
}

void runtime::set_supervisor(supervisor s) {
  std::lock_guard lock(m_core->supervisor_mutex);
  m_core->supervisor = std::move(s);
}

namespace detail {
namespace {

void run_turn(task* turn);

std::uint16_t next_generation(std::uint16_t g) noexcept { return g == 0xffff ? 1 : static_cast<std::uint16_t>(g + 1); }

actor_address address_of(const worker& w, const actor_slot& s) noexcept {
  return actor_address::make(w.rt->rank, w.index, s.index, s.generation);
}

// Queues s's turn frame on the ready FIFO unless it is queued or running;
// true when it queued it (the caller counts the turn as a task).
[[gnu::always_inline]] inline bool queue_turn(worker& w, actor_slot& s) noexcept {
  if (s.scheduled) return false;
  s.scheduled = true;
  task* t = &s.turn;
  t->next.store(nullptr, std::memory_order_relaxed);  // relaxed: owner-private list
  if (w.ready_tail == nullptr) {
    w.ready_head = t;
  } else {
    w.ready_tail->next.store(t, std::memory_order_relaxed);  // relaxed: owner-private list
  }
  w.ready_tail = t;
  return true;
}

void schedule(worker& w, actor_slot& s) noexcept {
  if (queue_turn(w, s)) w.counters.spawned.add();  // the turn is a task: wait_idle counts it until it ran
}

// Appends m to s's mailbox; true when s's turn was queued for it.
[[gnu::always_inline]] inline bool append_mail(worker& w, actor_slot& s, task* m) noexcept {
  m->next.store(nullptr, std::memory_order_relaxed);  // relaxed: owner-private list
  if (s.mail_tail == nullptr) {
    s.mail_head = m;
  } else {
    s.mail_tail->next.store(m, std::memory_order_relaxed);  // relaxed: owner-private list
  }
  s.mail_tail = m;
  w.counters.mailbox_high_water.max(++s.depth);
  return queue_turn(w, s);
}

void enqueue(worker& w, actor_slot& s, task* m) noexcept {
  if (append_mail(w, s, m)) w.counters.spawned.add();  // the turn (see schedule)
}

task* dequeue(actor_slot& s) noexcept {
  task* m = s.mail_head;
  s.mail_head = m->next.load(std::memory_order_relaxed);  // relaxed: owner-private list
  if (s.mail_head == nullptr) s.mail_tail = nullptr;
  --s.depth;
  return m;
}

// Runs frame m with no actor: a send does nothing, an ask fails with
// dead_letter_error. Counted.
void dead_letter(worker& w, task* m) noexcept {
  w.counters.dead_letters.add();
  actor_base* const outer = w.turn_actor;
  w.turn_actor = nullptr;
  try {
    m->run(m);
  } catch (...) {
  }
  w.turn_actor = outer;
  if (m->destroy != nullptr) m->destroy(m);
  free_frame(w, m);
  w.counters.executed.add();
}

// Moves a message on to another worker (the actor moved): one inbox push,
// a wake only if that worker sleeps. Counted once already, by its sender.
void push_to(runtime_core& rt, unsigned index, task* t) noexcept {
  worker& target = *rt.workers[index];
  target.inbox.push(t);
  // seq_cst fence: orders the push before the read of `sleeping` (pairs
  // with the parker's seq_cst store of sleeping, then its re-check).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (target.sleeping.load(std::memory_order_relaxed) == 1) wake_worker(rt, index);  // relaxed: ordered by the fence
}

// Puts message t (addressed to this worker) into its mailbox, or forwards
// it, or makes it a dead letter. from_inbox: it came through the inbox (so
// any install task before it has run).
void deliver(worker& w, task* t, bool from_inbox) noexcept {
  const actor_address a = actor_address::from_bits(t->tag);
  actor_slot* s = w.actors != nullptr ? w.actors->find(a.slot()) : nullptr;  // no table yet: no actor here
  if (s != nullptr && s->generation == a.generation()) {
    if (s->state == slot_state::live) {
      (from_inbox ? w.counters.messages_remote : w.counters.messages_local).add();
      enqueue(w, *s, t);
      return;
    }
    if (s->state == slot_state::forwarding) {
      t->tag = s->forward;
      push_to(*w.rt, actor_address::from_bits(s->forward).worker(), t);
      return;
    }
  } else if (!from_inbox && (s == nullptr || s->generation == 0) &&
             a.slot() < w.fresh_slots.load(std::memory_order_relaxed)) {  // relaxed: our own slots were counted
    // Spawned here by another thread and its install task is still in our
    // inbox: follow it through the inbox (FIFO), so it arrives after it.
    w.inbox.push(t);
    return;
  }
  dead_letter(w, t);
}

std::string what_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

void destroy_actor(actor_slot& s) noexcept {
  if (s.actor != nullptr) s.factory->destroy(s.actor);
  s.actor = nullptr;
}

// receive() threw: ask the supervisor; restart builds a fresh actor from
// the factory, stop leaves the slot stopped (later messages: dead letters).
void on_failure(worker& w, actor_slot& s, std::exception_ptr err) noexcept {
  w.counters.actor_failures.add();
  runtime_core& rt = *w.rt;
  supervisor sup;
  {
    std::lock_guard lock(rt.supervisor_mutex);
    sup = rt.supervisor;
  }
  supervision decision = supervision::stop;
  actor_failure f{address_of(w, s), err, what_of(err), s.restarts};
  if (sup) {
    try {
      decision = sup(f);
    } catch (...) {
      decision = supervision::stop;
    }
  } else {
    std::fprintf(stderr, "strata: %s failed: %s (stopped; set_supervisor decides restarts)\n",
                 f.address.to_string().c_str(), f.what.c_str());
  }
  destroy_actor(s);
  if (decision == supervision::restart) {
    try {
      s.actor = s.factory->create(w.memory);
      ++s.restarts;
      return;
    } catch (...) {
      s.actor = nullptr;
    }
  }
  s.state = slot_state::stopped;
}

// The slot's actor is gone for good: dead-letter its mail, free the slot
// under the next generation (the caller has reset `scheduled`).
void retire_slot(worker& w, actor_table& tab, actor_slot& s) noexcept {
  destroy_actor(s);
  while (s.mail_head != nullptr) dead_letter(w, dequeue(s));
  s.factory.reset();
  s.state = slot_state::empty;
  s.generation = next_generation(s.generation);
  --tab.live;
  w.counters.actors_live.set(tab.live);
  tab.free_slot(s.index);
}

// One turn of slot s: at most the budget's messages, one at a time. The
// caller (run_turn) has saved the outer turn and points w.turn_ctx at ctx,
// and counts the messages handled (the return value) as executed.
[[gnu::always_inline]] inline unsigned actor_turn(worker& w, actor_table& tab, actor_slot& s, actor_context& ctx,
                                                  unsigned budget) {
  ctx.begin(s.index, s.generation);
  s.running = true;
  unsigned left = budget;
  for (; left != 0 && s.mail_head != nullptr && s.state == slot_state::live; --left) {
    task* m = dequeue(s);
    w.turn_actor = s.actor;  // per message: a restart replaces the actor
    try {
      m->run(m);
    } catch (...) {
      on_failure(w, s, std::current_exception());  // here: a message that does not throw pays nothing
    }
    if (m->destroy != nullptr) m->destroy(m);
    free_frame(w, m);
    ++s.handled;
    if (ctx.stop_requested()) s.state = slot_state::stopped;
  }
  s.running = false;
  s.scheduled = false;
  if (s.state == slot_state::stopped) {
    retire_slot(w, tab, s);
  } else if (s.state == slot_state::live && s.mail_head != nullptr) {
    schedule(w, s);
  }
  return budget - left;
}

// A turn frame: this actor's turn, then the turns that became due meanwhile
// (an actor conversation on one worker: each message's reader is ready
// right after the writer's turn), at most k_chained of them before the
// worker looks at its inbox and deque again. The outer turn (a turn that
// waits in a nested help) is saved once for the chain, and one context
// serves every turn of it. Each chained turn was counted as a task when it
// was queued, so it is counted as executed here, with the chain's messages:
// one add at the end of the chain (a later count only makes wait_idle wait
// longer; every message's frame is already back in its pool by then).
constexpr int k_chained = 16;

void run_turn(task* turn) {
  worker& w = *current_worker();
  actor_table& tab = *w.actors;
  actor_base* const outer_actor = w.turn_actor;
  actor_context* const outer_ctx = w.turn_ctx;
  actor_context ctx(&w, actor_address{});
  w.turn_ctx = &ctx;
  const unsigned budget = w.rt->actor_budget;
  std::uint64_t done = actor_turn(w, tab, slot_of_turn(turn), ctx, budget);
  for (int k = 0; k < k_chained; ++k) {
    task* next = pop_ready(w);
    if (next == nullptr) break;
    done += 1 + actor_turn(w, tab, slot_of_turn(next), ctx, budget);
  }
  w.counters.executed.add(done);
  w.turn_actor = outer_actor;
  w.turn_ctx = outer_ctx;
}

void install(worker& w, std::uint32_t index, std::uint16_t gen, actor_base* a, std::unique_ptr<actor_factory> f,
             affinity aff) {
  actor_table& tab = table_of(w);
  actor_slot& s = tab.at(index);
  s.actor = a;
  s.factory = std::move(f);
  s.generation = gen;
  s.state = slot_state::live;
  s.aff = aff;
  s.restarts = 0;
  s.handled = 0;
  ++tab.live;
  w.counters.actors_live.set(tab.live);
}

// Runs on the target worker: installs an actor spawned by another thread.
// Owns the actor until then (a frame destroyed unrun frees it).
struct install_task {
  actor_base* actor;
  actor_factory* factory;
  std::uint32_t index;
  affinity aff;
  install_task(actor_base* a, actor_factory* f, std::uint32_t i, affinity x) : actor(a), factory(f), index(i), aff(x) {}
  install_task(install_task&& o) noexcept : actor(o.actor), factory(o.factory), index(o.index), aff(o.aff) {
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
    install(*current_worker(), index, 1, actor, std::unique_ptr<actor_factory>(factory), aff);
    actor = nullptr;
    factory = nullptr;
  }
};

// Runs on the new worker: takes over a migrated actor and its mailbox.
struct adopt_task {
  actor_base* actor;
  actor_factory* factory;
  task* mail_head;
  task* mail_tail;
  std::uint32_t depth;
  std::uint32_t index;
  unsigned restarts;
  affinity aff;
  adopt_task(actor_base* a, actor_factory* f, task* h, task* t, std::uint32_t d, std::uint32_t i, unsigned r,
             affinity x)
      : actor(a), factory(f), mail_head(h), mail_tail(t), depth(d), index(i), restarts(r), aff(x) {}
  adopt_task(adopt_task&& o) noexcept
      : actor(o.actor), factory(o.factory), mail_head(o.mail_head), mail_tail(o.mail_tail), depth(o.depth),
        index(o.index), restarts(o.restarts), aff(o.aff) {
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
    worker& w = *current_worker();
    install(w, index, 1, actor, std::unique_ptr<actor_factory>(factory), aff);
    actor_slot& s = *table_of(w).find(index);
    s.restarts = restarts;
    s.mail_head = mail_head;
    s.mail_tail = mail_tail;
    s.depth = depth;
    actor = nullptr;
    factory = nullptr;
    mail_head = nullptr;
    if (s.mail_head != nullptr) schedule(w, s);
  }
};

task* frame_on(worker& w) {
  task* t = w.pool.allocate();
    t->group = nullptr;
  t->how = completion::detached;
  return t;
}

void finish_reply(const std::shared_ptr<future_state<bool>>& reply, bool v) noexcept {
  if (!reply) return;
  reply->value.emplace(v);
  reply->finish();
}

// Moves slot s (live, not running) to worker `to`: the old slot forwards
// from now on; the adopt task carries the actor and its mailbox. The
// adopt task and every later forwarded message leave this worker through
// the same FIFO inbox of `to`, so nothing is reordered or lost.
bool move_slot(worker& w, actor_slot& s, unsigned to) {
  runtime_core& rt = *w.rt;
  worker& target = *rt.workers[to];
  // relaxed: uniqueness only; the adopt task orders the rest.
  const std::uint32_t index = target.fresh_slots.fetch_add(1, std::memory_order_relaxed);
  if (index >= actor_address::k_max_slots) return false;
  task* t = frame_on(w);
  emplace_callable(t, adopt_task(s.actor, s.factory.release(), s.mail_head, s.mail_tail, s.depth, index, s.restarts,
                                 s.aff));
  s.actor = nullptr;
  s.mail_head = s.mail_tail = nullptr;
  s.depth = 0;
  s.state = slot_state::forwarding;
  s.forward = actor_address::make(rt.rank, to, index, 1).bits();
  actor_table& tab = table_of(w);
  --tab.live;
  w.counters.actors_live.set(tab.live);
  w.counters.migrations_done.add();
  submit_to_worker(rt, to, t);  // from a worker: never refused
  return true;
}

}  // namespace

void migrate_actor(worker& w, actor_address a, unsigned to, std::shared_ptr<future_state<bool>> reply) {
  actor_slot* s = table_of(w).find(a.slot());
  if (s == nullptr || s->generation != a.generation()) {
    finish_reply(reply, false);
    return;
  }
  if (s->state == slot_state::forwarding) {  // follow the chain
    const actor_address next = actor_address::from_bits(s->forward);
    task* t = frame_on(w);
    emplace_callable(t, [next, to, reply] { migrate_actor(*current_worker(), next, to, reply); });
    submit_to_worker(*w.rt, next.worker(), t);
    return;
  }
  const bool ok = s->state == slot_state::live && s->aff == affinity::elastic && !s->running && to != w.index &&
                  to < w.rt->workers.size() && move_slot(w, *s, to);
  finish_reply(reply, ok);
}

void rebalance(worker& w, unsigned to) {
  if (w.actors == nullptr) return;
  actor_slot* best = nullptr;
  unsigned active = 0;
  std::uint64_t best_delta = 0;
  w.actors->for_each_live([&](actor_slot& s) {
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
  w.counters.migrations_proposed.add();
  move_slot(w, *best, to);
}

namespace {

// Every period: how much each worker did (tasks and messages executed).
// Skew: the busiest did more than twice the lightest plus 16, three
// periods in a row with the same busiest worker. Then the busiest is asked
// to move one elastic actor to the lightest worker, preferring one on its
// own NUMA node (a move there keeps the actor's memory close).
void monitor_loop(runtime_core& rt, unsigned period_ms) {
  const std::size_t n = rt.workers.size();
  std::vector<std::uint64_t> last(n, 0), delta(n, 0);
  unsigned streak = 0;
  std::size_t last_busy = n;
  std::unique_lock lock(rt.monitor_mutex);
  while (!rt.monitor_stop) {
    rt.monitor_cv.wait_for(lock, std::chrono::milliseconds(period_ms));
    if (rt.monitor_stop) break;
    std::uint64_t actors = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& c = rt.workers[i]->counters;
      const std::uint64_t now = tasks_executed(*rt.workers[i]);  // its counters only grow
      delta[i] = now - last[i];
      last[i] = now;
      actors += c.actors_live.get();
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
      emplace_callable(t, [to] { rebalance(*current_worker(), to); });
      submit_to_worker(rt, static_cast<unsigned>(busy), t);
    } catch (...) {
      // shutting down: nothing to balance any more
    }
    lock.lock();
  }
}

}  // namespace

void start_monitor(runtime_core& rt, unsigned period_ms) {
  if (period_ms == 0 || rt.workers.size() < 2) return;
  rt.monitor = std::thread(monitor_loop, std::ref(rt), period_ms);
}

void stop_monitor(runtime_core& rt) noexcept {
  if (!rt.monitor.joinable()) return;
  {
    std::lock_guard lock(rt.monitor_mutex);
    rt.monitor_stop = true;
  }
  rt.monitor_cv.notify_all();
  rt.monitor.join();
}

actor_table::~actor_table() {
  for (auto& c : m_chunks) {
    if (!c) continue;
    for (std::uint32_t i = 0; i < k_chunk; ++i) {
      actor_slot& s = c[i];
      destroy_actor(s);
      // Mail left at shutdown (the runtime drains it first; be safe).
      while (s.mail_head != nullptr) {
        task* m = dequeue(s);
        if (m->destroy != nullptr) m->destroy(m);
        if (m->home == k_no_home) delete m;
      }
    }
  }
}

actor_slot& actor_table::at(std::uint32_t index) {
  auto& c = m_chunks[index / k_chunk];
  if (!c) {
    c = std::make_unique<actor_slot[]>(k_chunk);
    const std::uint32_t base = index / k_chunk * k_chunk;
    for (std::uint32_t i = 0; i < k_chunk; ++i) {
      actor_slot& s = c[i];
      s.index = base + i;
      s.turn.run = run_turn;
      s.turn.home = k_embedded;
      s.turn.how = completion::detached;
      s.turn.tag = base + i;
    }
  }
  return c[index % k_chunk];
}

std::uint32_t actor_table::take_slot() {
  if (!m_free.empty()) {
    const std::uint32_t i = m_free.back();
    m_free.pop_back();
    return i;
  }
  // relaxed: only uniqueness matters; the install is ordered by the inbox or done here.
  const std::uint32_t i = m_worker.fresh_slots.fetch_add(1, std::memory_order_relaxed);
  if (i >= actor_address::k_max_slots) {
    throw runtime_error("strata: worker " + std::to_string(m_worker.index) + " has no free actor slot (" +
                        std::to_string(actor_address::k_max_slots) + " per worker)");
  }
  return i;
}

actor_table& table_of(worker& w) {
  if (w.actors == nullptr) w.actors = new actor_table(w);
  return *w.actors;
}

void destroy_actor_table(worker& w) noexcept {
  delete w.actors;
  w.actors = nullptr;
}

void deliver_from_inbox(worker& w, task* t) noexcept { deliver(w, t, true); }

void send_local(worker& w, task* t) noexcept {
  const actor_address a = actor_address::from_bits(t->tag);
  actor_slot* s = w.actors != nullptr ? w.actors->find(a.slot()) : nullptr;
  if (s != nullptr && s->generation == a.generation() && s->state == slot_state::live) [[likely]] {
    // deliver()'s common case, with one add for the message and its turn.
    w.counters.messages_local.add();
    w.counters.spawned.add(append_mail(w, *s, t) ? 2 : 1);
    return;
  }
  w.counters.spawned.add();  // handled (or dead-lettered) later: wait_idle waits for it
  deliver(w, t, false);
}

void send_message(runtime_core& rt, task* t) {
  const actor_address a = actor_address::from_bits(t->tag);
  if (a.rank() != rt.rank || a.worker() >= rt.workers.size()) {
    const std::string who = a.to_string();
    if (t->destroy != nullptr) t->destroy(t);
    if (t->home == k_no_home) {
      delete t;
    } else {
      free_frame(*current_worker(), t);
    }
    throw usage_error("strata: " + who + " is not an actor of this runtime (rank " + std::to_string(rt.rank) + ", " +
                      std::to_string(rt.workers.size()) + " workers)");
  }
  worker* w = current_worker();
  if (w != nullptr && w->rt == &rt && w->index == a.worker()) {
    send_local(*w, t);
    return;
  }
  submit_to_worker(rt, a.worker(), t);
}

actor_address spawn_actor(runtime_core& rt, spawn_request req) {
  const auto n = static_cast<unsigned>(rt.workers.size());
  // relaxed: a round-robin counter.
  const unsigned target =
      req.worker >= 0 ? static_cast<unsigned>(req.worker) : rt.next_actor_worker.fetch_add(1, std::memory_order_relaxed) % n;
  worker& tw = *rt.workers[target];
  actor_base* a = req.factory->create(tw.memory);  // on the target's node
  worker* w = current_worker();
  if (w == &tw) {
    actor_table& tab = table_of(tw);
    std::uint32_t index;
    try {
      index = tab.take_slot();
    } catch (...) {
      req.factory->destroy(a);
      throw;
    }
    actor_slot& s = tab.at(index);
    const std::uint16_t gen = s.generation == 0 ? 1 : s.generation;  // a freed slot already has its next generation
    install(tw, index, gen, a, std::move(req.factory), req.aff);
    return actor_address::make(rt.rank, target, index, gen);
  }
  // relaxed: uniqueness only; the install task orders the rest.
  const std::uint32_t index = tw.fresh_slots.fetch_add(1, std::memory_order_relaxed);
  if (index >= actor_address::k_max_slots) {
    req.factory->destroy(a);
    throw runtime_error("strata: worker " + std::to_string(target) + " has no free actor slot (" +
                        std::to_string(actor_address::k_max_slots) + " per worker)");
  }
  task* t = detached_frame(rt, w);
  emplace_callable(t, install_task(a, req.factory.release(), index, req.aff));
  submit_to_worker(rt, target, t);  // throws after shutdown (the frame's callable frees the actor)
  return actor_address::make(rt.rank, target, index, 1);
}

}  // namespace detail
}  // namespace strata
