// Actors pinned to workers.
//
//   struct counter : strata::actor<counter> {
//     long n = 0;
//     void receive(strata::actor_context&, const increment& m) { n += m.by; }
//     long receive(strata::actor_context&, const get&) { return n; }   // answers an ask
//   };
//   auto c = rt.spawn_actor<counter>();                                 // elastic, round robin
//   auto s = rt.spawn_actor<counter>(strata::affinity::sticky, strata::worker_id{0});
//   c.send(increment{5});                   // any thread or actor; never blocks, never drops
//   strata::future<long> total = c.ask(get{});
//
// An actor lives on one worker and handles one message at a time there. A
// message is a task frame (the callable holds the payload), so sending
// allocates nothing on a worker (the frame comes from its pool):
// - to an actor on the sender's own worker: appended to the actor's
//   mailbox directly (worker-private: no queue shared with anyone, no atomic);
// - to an actor on another worker: one pointer pushed into that worker's
//   inbox (the MPSC inbox the scheduler drains anyway), routed to the
//   actors' work source there; a futex wake only if that worker sleeps.
// The worker moves arriving messages into mailboxes and runs a ready actor's
// turn (at most `actor_budget` messages, then it queues again behind the
// other ready actors) between its tasks, so neither actors nor tasks starve.
//
// Addresses encode (rank, worker, slot, generation): there is no global
// routing map. An address of another rank (strata::mpi::session::actor_at)
// sends through the MPI session (ext/remote.hpp): the message is encoded
// by value (<strata/mpi/serialize.hpp>; a type that cannot cross ranks is a
// usage_error at the send, since one actor_ref type serves both cases). The actors are a module
// on the core's seams (ext/actor_system.hpp); this header also defines the
// runtime's actor members (spawn_actor, migrate_actor, set_supervisor). A message to an actor
// that is gone (stopped, or a stale generation) is a counted dead letter;
// an ask to it fails with dead_letter_error.
//
// Failure isolation: an exception escaping receive() poisons that actor
// only. The runtime's supervisor (set_supervisor; default: stop) chooses
// restart (a fresh actor built from the original constructor arguments,
// which are kept as copies) or stop (later messages are dead letters).
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <strata/actors/actor_address.hpp>
#include <strata/actors/ext/actor_system.hpp>
#include <strata/actors/ext/remote.hpp>
#include <strata/mpi/serialize.hpp>
#include <strata/numa_alloc/memory.hpp>
#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/spawn.hpp>
#include <strata/runtime/ext/submit.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/future.hpp>
#include <strata/runtime/runtime.hpp>
#include <strata/topology/ids.hpp>

namespace strata {

class runtime;
class actor_context;

enum class affinity : std::uint8_t {  // declared in runtime.hpp
  elastic,  // may be migrated by the load monitor (the default)
  sticky,   // stays on its worker for life
};

// Base of every actor (the runtime holds actors through it).
class actor_base {
 public:
  actor_base() = default;
  actor_base(const actor_base&) = delete;
  actor_base& operator=(const actor_base&) = delete;
  virtual ~actor_base() = default;
};

// Derive from actor<Self> and give Self receive(actor_context&, const M&)
// overloads, one per message type M (a non-void result answers ask()).
template <class Derived>
class actor : public actor_base {};

// A message reached no actor (stopped, never existed, or a stale address).
class dead_letter_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class A, class M>
concept handles = requires(A& a, actor_context& c, const M& m) { a.receive(c, m); };

template <class A, class M>
using reply_t = decltype(std::declval<A&>().receive(std::declval<actor_context&>(), std::declval<const M&>()));

namespace detail {

// Builds actors for spawn and restart: keeps copies of the constructor
// arguments; objects live in memory of the actor's worker's node.
struct actor_factory {
  virtual ~actor_factory() = default;
  virtual actor_base* create(memory_placement where) = 0;
  virtual void destroy(actor_base* a) noexcept = 0;
};

template <class T, class... Args>
struct actor_factory_of final : actor_factory {
  static constexpr std::size_t k_align = alignof(T) > alignof(std::max_align_t) ? alignof(T) : alignof(std::max_align_t);
  std::tuple<Args...> args;
  explicit actor_factory_of(std::tuple<Args...> a) : args(std::move(a)) {}
  actor_base* create(memory_placement where) override {
    void* mem = numa_allocate(sizeof(T), where, k_align);
    try {
      return std::apply([mem](const Args&... a) { return static_cast<actor_base*>(::new (mem) T(a...)); }, args);
    } catch (...) {
      numa_deallocate(mem, sizeof(T), k_align);
      throw;
    }
  }
  void destroy(actor_base* a) noexcept override {
    T* t = static_cast<T*>(a);
    t->~T();
    numa_deallocate(t, sizeof(T), k_align);
  }
};

struct spawn_request {
  std::unique_ptr<actor_factory> factory;
  affinity aff = affinity::elastic;
  int worker = -1;  // -1: round robin
};

// Spawns on the chosen worker; from inside a turn on the same worker the
// actor is installed at once (actor_system.cpp).
actor_address spawn_actor(actor_system& sys, spawn_request req);
[[noreturn]] void throw_dead_letter(std::uint64_t address);

template <class A, class M>
struct message_send {
  M msg;
  void operator()() {
    if (actor_base* a = t_turn.actor) static_cast<A*>(a)->receive(*t_turn.ctx, std::as_const(msg));
  }
};

template <class A, class M, class R>
struct message_ask {
  std::shared_ptr<future_state<R>> reply;
  M msg;
  void operator()() {
    actor_base* a = t_turn.actor;
    if (a == nullptr) {
      reply->error = std::make_exception_ptr(dead_letter_error("strata: the ask reached no actor (dead letter)"));
      reply->finish();
      return;
    }
    try {
      if constexpr (std::is_void_v<R>) {
        static_cast<A*>(a)->receive(*t_turn.ctx, std::as_const(msg));
        reply->value.emplace('\0');
      } else {
        reply->value.emplace(static_cast<A*>(a)->receive(*t_turn.ctx, std::as_const(msg)));
      }
    } catch (...) {
      reply->error = std::current_exception();
      reply->finish();
      throw;  // the actor is poisoned too
    }
    reply->finish();
  }
};

// Fills message frame t (from a pool or the heap) addressed to `to`. Its
// sink (the actors' work source on the destination worker) is set by
// send_message, when it leaves for another worker's inbox.
template <class F>
void fill_message(task* t, actor_address to, F&& f) {
  t->group = nullptr;
  t->how = completion::routed;
  t->kind = k_message_frame;
  t->tag = to.bits();
  emplace_callable(t, std::forward<F>(f));
}

// A message frame: from the calling worker's pool on a worker of the
// system's runtime, else from the calling thread's lane pool or the heap
// (external_routed_frame).
template <class F>
task* make_message(actor_system& sys, actor_address to, F&& f) {
  worker* w = current_worker();
  const bool on_worker = w != nullptr && w->rt == &sys.core;
  task* t = on_worker ? spawn_frame(*w) : external_routed_frame(sys.core);
  try {
    fill_message(t, to, std::forward<F>(f));
  } catch (...) {
    // The message's move threw: the frame goes back, the exception to the sender.
    if (on_worker) {
      w->pool.free_local(t);
    } else {
      discard_external_frame(sys.core, t);
    }
    throw;
  }
  if constexpr (k_boxed<F>) {
    if (on_worker) w->counters.boxed.add();
  }
  return t;
}

// --- Messages from other ranks (ext/remote.hpp) ---

// The local frame of a message that came from another rank.
template <class A, class M>
struct remote_send_frame {
  M msg;
  remote_token token;
  void operator()() {
    if (actor_base* a = t_turn.actor) static_cast<A*>(a)->receive(*t_turn.ctx, std::as_const(msg));
  }
};

std::string dead_letter_text(actor_address to);

template <class A, class M, class R>
struct remote_ask_frame {
  M msg;
  remote_token token;
  actor_address to;
  void operator()() {
    actor_base* a = t_turn.actor;
    if (a == nullptr) {
      token.answer(answer_status::dead_letter, dead_letter_text(to));
      return;
    }
    try {
      std::vector<std::byte> out;
      if constexpr (std::is_void_v<R>) {
        static_cast<A*>(a)->receive(*t_turn.ctx, std::as_const(msg));
      } else {
        mpi::writer w(out);
        w.value(static_cast<A*>(a)->receive(*t_turn.ctx, std::as_const(msg)));
      }
      token.answer(answer_status::value, out);
    } catch (const std::exception& e) {
      token.answer(answer_status::threw, std::string_view(e.what()));
      throw;  // the actor is poisoned, as for a local ask
    } catch (...) {
      token.answer(answer_status::threw, std::string_view("an exception that is not a std::exception"));
      throw;
    }
  }
};

template <class R>
constexpr bool k_remote_reply = std::is_void_v<R> || mpi::serializable<R>;

// Decodes a message of type M for actor type A and sends it to `to` as a
// local message (registered per pair by remote_message<A, M>): through the
// worker's inbox, or, from a remote_batch that the inbox brought to that
// worker (in_batch), straight into the mailbox.
//
// The token comes first: whatever fails from here on (the decode, memory)
// still answers the ask and finishes the item; the exception then tells the
// transport why.
template <class A, class M>
void deliver_remote(actor_system& sys, actor_address to, mpi::reader& r, remote_delivery how, bool in_batch) {
  remote_token token(how);
  std::optional<M> decoded;
  try {
    decoded.emplace(r.value<M>());
    if (r.left() != 0) throw mpi::decode_error("strata: trailing bytes after an actor message");
  } catch (const std::exception& e) {
    token.answer(answer_status::threw, std::string_view(e.what()));
    throw;
  }
  M m = std::move(*decoded);
  if (sys.home_of(to) == nullptr) {  // a worker this rank does not have
    token.answer(answer_status::dead_letter, dead_letter_text(to));
    return;
  }
  // Through the inbox even on the actor's worker (deliver_message says why),
  // unless the inbox brought the batch it came in (deliver_received).
  if (!token.wants_answer()) {
    deliver_received(sys, make_message(sys, to, remote_send_frame<A, M>{std::move(m), std::move(token)}), in_batch);
    return;
  }
  using R = reply_t<A, M>;
  if constexpr (k_remote_reply<R>) {
    deliver_received(sys, make_message(sys, to, remote_ask_frame<A, M, R>{std::move(m), std::move(token), to}),
                     in_batch);
  } else {
    token.answer(answer_status::threw, std::string_view("the reply type cannot cross ranks"));
  }
}

// The registry id of (A, M); its initialiser registers the pair on every
// rank of the binary (an instantiation anywhere in it is enough).
template <class A, class M>
struct remote_message {
  inline static const std::uint64_t id = register_remote_message(typeid(A), typeid(M), &deliver_remote<A, M>);
};

// The transport while an MPI session is open, else a usage_error naming the
// address.
remote_port& port_for(actor_system& sys, actor_address to);
[[noreturn]] void throw_not_serializable(const std::type_info& message, actor_address to);

template <class R>
struct remote_answer_of final : remote_answer {
  explicit remote_answer_of(std::shared_ptr<future_state<R>> s) : state(std::move(s)) {}
  void value(mpi::reader& r) override {
    if constexpr (std::is_void_v<R>) {
      state->value.emplace('\0');
    } else {
      R v = r.value<R>();
      if (r.left() != 0) throw mpi::decode_error("strata: trailing bytes after an actor's reply");
      state->value.emplace(std::move(v));
    }
    state->finish();
  }
  void fail(std::exception_ptr e) noexcept override {
    state->error = std::move(e);
    state->finish();
  }
  std::shared_ptr<future_state<R>> state;
};

}  // namespace detail

// A handle to an actor of type T: a value (copy it freely, send from anywhere).
template <class T>
class actor_ref {
 public:
  actor_ref() = default;
  actor_ref(detail::runtime_core* rt, detail::actor_system* sys, actor_address a) noexcept
      : m_rt(sys != nullptr && a.rank() == sys->rank ? rt : nullptr),
        m_sys(sys),
        m_home(sys != nullptr ? sys->home_of(a) : nullptr),
        m_address(a) {}
  // A handle to address `a` of the runtime rt (a test or the MPI bridge
  // naming an address it got by value).
  actor_ref(detail::runtime_core* rt, actor_address a)
      : actor_ref(rt, rt != nullptr ? &detail::actors_of(*rt) : nullptr, a) {}

  actor_address address() const noexcept { return m_address; }
  bool valid() const noexcept { return m_sys != nullptr && m_address.valid(); }
  // The actor lives on another rank (its messages go through the MPI session).
  bool remote() const noexcept { return m_sys != nullptr && m_address.rank() != m_sys->rank; }

  // Never blocks, never drops (a gone actor makes it a counted dead letter).
  //
  // From a worker of the handle's runtime is the fast path: a frame from
  // the worker's free list, filled, then a tail call: into the mailbox
  // (same worker) or through send_message (which checks the address) to
  // another worker's inbox. Everything else (a thread outside, an empty
  // free list, an empty handle, a boxed message, one whose copy or move
  // may throw) is one out-of-line call, so that the fast path saves no
  // registers and builds no stack frame around it. (An empty handle, and
  // one of an actor on another rank, have m_rt == nullptr, which no
  // worker's rt equals.)
  template <class M>
    requires handles<T, std::decay_t<M>>
  void send(M&& m) const {
    using F = detail::message_send<T, std::decay_t<M>>;
    // Nothing on the fast path may throw once the frame is taken: building
    // the message from the argument and moving it into the frame.
    if constexpr (!detail::k_boxed<F> && std::is_nothrow_move_constructible_v<F> &&
                  std::is_nothrow_constructible_v<std::decay_t<M>, M&&>) {
      detail::worker* w = detail::current_worker();
      if (w != nullptr && w->rt == m_rt) {
        if (detail::task* t = w->pool.try_allocate()) {
          detail::fill_message(t, m_address, F{std::forward<M>(m)});
          if (detail::is_on(*m_sys, *w, m_address)) {
            detail::send_local(*m_home, *w, t);
          } else {
            detail::send_message(*m_sys, t);
          }
          return;
        }
      }
    }
    send_slow(std::forward<M>(m));
  }

  // The reply of receive(ctx, m); get() rethrows its exception, or
  // dead_letter_error when the actor is gone.
  template <class M>
    requires handles<T, std::decay_t<M>>
  auto ask(M&& m) const {
    using R = reply_t<T, std::decay_t<M>>;
    check("ask");
    if (m_rt == nullptr) return ask_remote<R>(std::forward<M>(m));
    auto st = std::make_shared<detail::future_state<R>>(m_rt);
    detail::send_message(*m_sys, detail::make_message(*m_sys, m_address,
                                                      detail::message_ask<T, std::decay_t<M>, R>{st, std::forward<M>(m)}));
    return future<R>(std::move(st));
  }

  friend bool operator==(const actor_ref& a, const actor_ref& b) noexcept {
    return a.m_sys == b.m_sys && a.m_address == b.m_address;
  }

 private:
  template <class M>
  [[gnu::noinline]] void send_slow(M&& m) const {
    check("send");
    if (m_rt == nullptr) return send_remote(std::forward<M>(m));
    using F = detail::message_send<T, std::decay_t<M>>;
    detail::worker* w = detail::current_worker();
    if (w != nullptr && w->rt == m_rt && detail::is_on(*m_sys, *w, m_address)) {
      // Same worker: straight into the mailbox, no routing.
      detail::send_local(*m_home, *w, detail::make_message(*m_sys, m_address, F{std::forward<M>(m)}));
      return;
    }
    detail::send_message(*m_sys, detail::make_message(*m_sys, m_address, F{std::forward<M>(m)}));
  }
  template <class M>
  [[gnu::noinline]] void send_remote(const M& m) const {
    using V = std::decay_t<M>;
    if constexpr (mpi::serializable<V> && mpi::detail::fixed_size<V>() <= k_stack_message) {
      std::array<std::byte, mpi::detail::fixed_size<V>() + 1> bytes;  // + 1: never a zero-length array
      mpi::detail::put_fixed(bytes.data(), m);
      detail::port_for(*m_sys, m_address)
          .post_message(m_address, detail::remote_message<T, V>::id, bytes.data(), bytes.size() - 1, nullptr);
    } else if constexpr (mpi::serializable<V>) {
      mpi::scratch bytes;
      mpi::writer w(bytes.bytes());
      w.value(m);
      detail::port_for(*m_sys, m_address)
          .post_message(m_address, detail::remote_message<T, V>::id, bytes.bytes().data(), bytes.bytes().size(),
                        nullptr);
    } else {
      detail::throw_not_serializable(typeid(V), m_address);
    }
  }
  template <class R, class M>
  future<R> ask_remote(const M& m) const {
    using V = std::decay_t<M>;
    if constexpr (mpi::serializable<V> && detail::k_remote_reply<R>) {
      mpi::scratch bytes;
      mpi::writer w(bytes.bytes());
      w.value(m);
      auto st = std::make_shared<detail::future_state<R>>(&m_sys->core);
      detail::port_for(*m_sys, m_address)
          .post_message(m_address, detail::remote_message<T, V>::id, bytes.bytes().data(), bytes.bytes().size(),
                        std::make_unique<detail::remote_answer_of<R>>(st));
      return future<R>(std::move(st));
    } else {
      detail::throw_not_serializable(mpi::serializable<V> ? typeid(R) : typeid(V), m_address);
    }
  }
  void check(const char* what) const {
    if (m_sys == nullptr) throw usage_error(std::string("strata::actor_ref::") + what + " on an empty actor_ref");
  }
  // A remote message of a fixed encoded size up to this many bytes is
  // encoded on the stack (mpi::detail::put_fixed), not in the scratch buffer.
  static constexpr std::size_t k_stack_message = 256;
  // The runtime, for the fast path: nullptr for an empty handle and for an
  // actor on another rank.
  detail::runtime_core* m_rt = nullptr;
  detail::actor_system* m_sys = nullptr;
  // The actors of the address's worker (nullptr for another rank): a send
  // on that worker goes to its mailbox through this, one dependent load
  // fewer than through m_sys.
  detail::actor_worker* m_home = nullptr;
  actor_address m_address;
};

// What receive() gets: who am I, where do I run, spawn children next to me.
class actor_context {
 public:
  // The actor's identity (the address it was spawned at), wherever it runs now.
  actor_address self() const noexcept { return actor_address::from_bits(m_self); }
  worker_id worker() const noexcept { return worker_id{m_worker}; }
  template <class T>
  actor_ref<T> self_ref() const noexcept {
    return actor_ref<T>(&m_sys->core, m_sys, self());
  }
  // A child on this actor's worker (same-worker messages stay local).
  template <class T, class... Args>
  actor_ref<T> spawn_actor(Args&&... args) const {
    return spawn_actor<T>(affinity::elastic, std::forward<Args>(args)...);
  }
  template <class T, class... Args>
  actor_ref<T> spawn_actor(affinity aff, Args&&... args) const {
    detail::spawn_request req;
    req.factory = std::make_unique<detail::actor_factory_of<T, std::decay_t<Args>...>>(
        std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...));
    req.aff = aff;
    req.worker = static_cast<int>(m_worker);
    return actor_ref<T>(&m_sys->core, m_sys, detail::spawn_actor(*m_sys, std::move(req)));
  }
  // Stops this actor after the current message: later messages are dead letters.
  void stop() noexcept { m_stop = true; }

  // Internal: the turn loop's context.
  actor_context(detail::actor_system* sys, unsigned worker) noexcept : m_sys(sys), m_worker(worker) {}
  // The next turn of a chain (run_turn), of the actor whose identity is `self`.
  void begin(std::uint64_t self) noexcept {
    m_self = self;
    m_stop = false;
  }
  bool stop_requested() const noexcept { return m_stop; }

 private:
  detail::actor_system* m_sys;
  unsigned m_worker;
  std::uint64_t m_self = 0;
  bool m_stop = false;
};

// --- The runtime's actor members (declared in runtime.hpp) ---

template <class T, class... Args>
actor_ref<T> runtime::spawn_actor_on(affinity aff, int worker, Args&&... args) {
  static_assert(std::is_base_of_v<actor_base, T>, "spawn_actor<T>: T must derive from strata::actor<T>");
  if (worker >= static_cast<int>(num_workers())) check_worker(worker_id{static_cast<unsigned>(worker)}, "spawn_actor");
  detail::actor_system& sys = detail::actors_of(*m_core);
  detail::spawn_request req;
  req.factory = std::make_unique<detail::actor_factory_of<T, std::decay_t<Args>...>>(
      std::tuple<std::decay_t<Args>...>(std::forward<Args>(args)...));
  req.aff = aff;
  req.worker = worker;
  return actor_ref<T>(m_core.get(), &sys, detail::spawn_actor(sys, std::move(req)));
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

template <class T>
future<bool> runtime::migrate_actor(const actor_ref<T>& a, worker_id to) {
  return migrate_actor(a.address(), to);
}

template <class S>
void runtime::set_supervisor(S&& s) {
  detail::actor_system& sys = detail::actors_of(*m_core);
  strata::supervisor next(std::forward<S>(s));
  std::lock_guard lock(sys.supervisor_mutex);
  sys.supervisor = std::move(next);
}

}  // namespace strata
