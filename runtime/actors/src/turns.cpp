// Mailboxes and turns: delivery to a slot, one actor's turn, failures, dead
// letters (design in actor.hpp, actor_table.hpp and actor_worker.hpp).
// Everything here runs on the table's own worker.
#include <cstdio>
#include <string>

#include <strata/actors/actor.hpp>
#include <strata/runtime/task_group.hpp>

#include "actor_worker.hpp"

namespace strata::detail {
namespace {

actor_address address_of(const actor_worker& aw, const actor_slot& s) noexcept {
  return actor_address::make(aw.sys.rank, aw.w.index, s.index, s.generation);
}

// Links m at the end of s's mail list.
[[gnu::always_inline]] inline void link_mail(actor_slot& s, task* m) noexcept {
  m->next.store(nullptr, std::memory_order_relaxed);  // relaxed: owner-private list
  if (s.mail_tail == nullptr) {
    s.mail_head = m;
  } else {
    s.mail_tail->next.store(m, std::memory_order_relaxed);  // relaxed: owner-private list
  }
  s.mail_tail = m;
}

// Appends m to s's mailbox and makes its turn due.
[[gnu::always_inline]] inline void append_mail(actor_worker& aw, actor_slot& s, task* m) noexcept {
  link_mail(s, m);
  aw.counters.mailbox_high_water.max(++s.depth);
  aw.queue_turn(s);
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
void dead_letter(actor_worker& aw, task* m) noexcept {
  worker& w = aw.w;
  aw.counters.dead_letters.add();
  const turn_state outer = t_turn;
  t_turn.actor = nullptr;
  try {
    m->run(m);
  } catch (...) {
  }
  t_turn = outer;
  if (m->destroy != nullptr) m->destroy(m);
  free_frame(w, m);
  w.counters.executed.add();
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

// receive() threw: ask the supervisor; restart builds a fresh actor from
// the factory, stop leaves the slot stopped (later messages: dead letters).
void on_failure(actor_worker& aw, actor_slot& s, const std::exception_ptr& err) noexcept {
  aw.counters.actor_failures.add();
  supervisor sup;
  {
    std::lock_guard lock(aw.sys.supervisor_mutex);
    sup = aw.sys.supervisor;
  }
  supervision decision = supervision::stop;
  actor_failure f{actor_address::from_bits(s.home), err, what_of(err), s.restarts};
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
      s.actor = s.factory->create(aw.w.memory);
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
void retire_slot(actor_worker& aw, actor_slot& s) noexcept {
  actor_table& tab = aw.table;
  destroy_actor(s);
  while (s.mail_head != nullptr) dead_letter(aw, dequeue(s));
  delete s.factory;
  s.factory = nullptr;
  s.state = slot_state::empty;
  s.generation = next_generation(s.generation);
  --tab.live;
  aw.counters.actors_live.set(tab.live);
  tab.free_slot(s.index);
}

// One turn of slot s: at most the budget's messages, one at a time. The
// caller (poll) has saved the outer turn and points t_turn.ctx at ctx, and
// counts the messages handled (the return value) as executed.
[[gnu::always_inline]] inline unsigned actor_turn(actor_worker& aw, worker& w, actor_slot& s, actor_context& ctx,
                                                  unsigned budget) {
  ctx.begin(s.home);
  s.running = true;
  unsigned left = budget;
  for (; left != 0 && s.mail_head != nullptr && s.state == slot_state::live; --left) {
    task* m = dequeue(s);
    t_turn.actor = s.actor;  // per message: a restart replaces the actor
    try {
      m->run(m);
    } catch (...) {
      on_failure(aw, s, std::current_exception());  // here: a message that does not throw pays nothing
    }
    if (m->destroy != nullptr) m->destroy(m);
    free_frame(w, m);
    ++s.handled;
    if (ctx.stop_requested()) s.state = slot_state::stopped;
  }
  s.running = false;
  s.scheduled = false;
  if (s.state == slot_state::stopped) {
    retire_slot(aw, s);
  } else if (s.state == slot_state::live && s.mail_head != nullptr) {
    aw.queue_turn(s);
  }
  return budget - left;
}

}  // namespace

// Turns due on this worker, one after the other, at most `budget` of them
// before the worker looks at its inbox and deque again. The outer turn (a
// turn that waits in a nested help) is saved once for the chain, one
// context serves every turn of it, and the messages handled are counted
// executed with one add at the end (a later count only makes wait_idle wait
// longer; every message's frame is back in its pool by then).
std::size_t actor_worker::poll(worker& on, std::size_t budget) noexcept {
  if (ready_head == nullptr || budget == 0) return 0;
  const turn_state outer = t_turn;
  task_group* const outer_group = on.running_group;
  on.running_group = nullptr;  // a turn belongs to no task group
  actor_context ctx(&sys, on.index);
  t_turn.ctx = &ctx;
  // Locals, not members: a message's callable may write anywhere, so the
  // compiler would reload members after every call.
  const unsigned messages = sys.budget;
  std::uint64_t handled = 0;
  std::size_t turns = 0;
  actor_slot* s = pop_ready();
  do {
    if (on.trace != nullptr) [[unlikely]] {  // STRATA_TRACE: a span per turn
      const std::uint64_t start = trace_now();
      const actor_address a = address_of(*this, *s);  // before the turn: a retired slot changes generation
      const unsigned n = actor_turn(*this, on, *s, ctx, messages);
      handled += n;
      on.trace->span(trace_kind::actor_turn, start, a.bits(), n);
    } else {
      handled += actor_turn(*this, on, *s, ctx, messages);
    }
    ++turns;
  } while (turns != budget && (s = pop_ready()) != nullptr);
  on.counters.executed.add(handled);
  on.running_group = outer_group;
  t_turn = outer;
  return turns;
}

void actor_worker::accept(worker&, task* t) noexcept {
  if (t->kind == k_batch_frame) {
    // A remote_batch (ext/remote.hpp): its callable puts each message into
    // its mailbox (deliver_received) at this point of the inbox's order.
    try {
      t->run(t);
    } catch (...) {  // remote_batch::deliver_all catches what each message throws
    }
    if (t->destroy != nullptr) t->destroy(t);
    free_frame(w, t);
    w.counters.executed.add();  // the batch frame itself; its messages count as theirs run
    return;
  }
  deliver(*this, t, true);
}

void forward_to(runtime_core& rt, unsigned index, task* t) noexcept {
  worker& target = *rt.workers[index];
  target.inbox.push(t);
  notify_worker(target);
}

void deliver(actor_worker& aw, task* t, bool from_inbox) noexcept {
  const actor_address a = actor_address::from_bits(t->tag);
  actor_slot* s = aw.table.find(a.slot());  // no chunk yet: no actor there
  if (s != nullptr && s->generation == a.generation()) {
    if (s->state == slot_state::live) {
      (from_inbox ? aw.counters.messages_remote : aw.counters.messages_local).add();
      append_mail(aw, *s, t);
      return;
    }
    if (s->state == slot_state::forwarding) {
      if (s->refreshing) {  // a home slot shortening its chain: hold the mail (forwarding.cpp)
        link_mail(*s, t);
        return;
      }
      aw.counters.forwards.add();
      t->tag = s->forward;
      forward_to(aw.sys.core, actor_address::from_bits(s->forward).worker(), t);
      return;
    }
  } else if (!from_inbox && (s == nullptr || s->generation == 0) &&
             a.slot() < aw.fresh_slots.load(std::memory_order_relaxed)) {  // relaxed: our own slots were counted
    // Spawned here by another thread and its install task is still in our
    // inbox: follow it through the inbox (FIFO), so it arrives after it.
    t->sink = static_cast<std::uint8_t>(aw.sys.sink);
    aw.w.inbox.push(t);
    return;
  }
  dead_letter(aw, t);
}

void send_local(actor_worker& aw, worker& w, task* t) noexcept {
  const actor_address a = actor_address::from_bits(t->tag);
  w.counters.spawned.add();  // handled (or dead-lettered) later: wait_idle waits for it
  actor_slot* s = aw.table.find(a.slot());
  if (s != nullptr && s->generation == a.generation() && s->state == slot_state::live) [[likely]] {
    aw.counters.messages_local.add();
    append_mail(aw, *s, t);
    return;
  }
  deliver(aw, t, false);
}

void destroy_actor(actor_slot& s) noexcept {
  if (s.actor != nullptr) s.factory->destroy(s.actor);
  s.actor = nullptr;
}

void install(actor_worker& aw, std::uint32_t index, std::uint16_t gen, actor_base* a, std::unique_ptr<actor_factory> f,
             affinity aff, std::uint64_t home) {
  actor_table& tab = aw.table;
  actor_slot& s = tab.at(index);
  s.home = home != 0 ? home : actor_address::make(aw.sys.rank, aw.w.index, index, gen).bits();
  s.forward = 0;
  s.refreshing = s.refresh_again = false;
  s.actor = a;
  STRATA_ASSERT(s.factory == nullptr, "an installed slot was retired first");
  s.factory = f.release();
  s.generation = gen;
  s.state = slot_state::live;
  s.aff = aff;
  s.restarts = 0;
  s.handled = 0;
  ++tab.live;
  aw.counters.actors_live.set(tab.live);
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
  const std::uint32_t i = m_fresh.fetch_add(1, std::memory_order_relaxed);
  if (i >= actor_address::k_max_slots) {
    throw runtime_error("strata: worker " + std::to_string(m_worker) + " has no free actor slot (" +
                        std::to_string(actor_address::k_max_slots) + " per worker)");
  }
  return i;
}

}  // namespace strata::detail
