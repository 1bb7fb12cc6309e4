// strata::mpi: one runtime per rank, joined by MPI.
//
//   strata::runtime rt;
//   strata::mpi::session mpi{argc, argv, rt};      // MPI_Init_thread unless the application did
//   auto f = mpi.submit_at(1, step, 7, halo);       // a registered function, on rank 1
//   mpi.post_at(peer, add_to_bin, bin);             // fire and forget (YGM's async)
//   mpi.publish(rt.spawn_actor<counter>(), "c");    // reachable by name from every rank
//   auto c1 = mpi.actor_at<counter>(1, "c");        // actor_ref<counter>: send/ask across ranks
//   mpi.wait_quiescent();                           // collective: nothing in flight anywhere
//
// The session duplicates the application's communicator twice (data and
// control traffic) and sets MPI_ERRORS_RETURN on its own communicators
// only; it never receives on the application's. One thread makes the
// bridge's MPI calls: a progress thread or a comm worker of the runtime
// (MPI_THREAD_SERIALIZED or MULTIPLE), or, under MPI_THREAD_FUNNELED, the
// thread that built the session, inside
// the session's calls (progress(), get(), wait_quiescent()). Under
// SERIALIZED the application's own MPI calls go through serialized(fn),
// which holds the bridge's MPI lock. docs/mpi-bridge.md has the protocols.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <strata/actors/actor.hpp>
#include <strata/mpi/remote.hpp>
#include <strata/mpi/serialize.hpp>
#include <strata/runtime/future.hpp>
#include <strata/runtime/runtime.hpp>

namespace strata::mpi {

enum class thread_level { single, funneled, serialized, multiple };
// automatic: thread, or caller under FUNNELED. thread: a progress thread of
// the bridge's own. worker: one of the runtime's workers (config::comm_worker)
// makes the MPI calls between its tasks. caller: the session's thread, inside
// the session's calls.
enum class progress_mode { automatic, thread, caller, worker };
// throughput: items are coalesced into per-destination buffers, flushed when
// full, when the runtime goes idle, or after flush_delay_us. latency: a
// buffer leaves at once when its link has nothing in flight.
enum class send_mode { throughput, latency };

struct config {
  send_mode mode = send_mode::throughput;
  progress_mode progress = progress_mode::automatic;  // thread unless the level is FUNNELED
  // progress=worker: the comm worker's index; last_worker: the runtime's last.
  // A task on it that runs longer than deadline_ms without posting holds
  // the rank's heartbeats back (its passes run between tasks, and in a post
  // that sends a full buffer).
  static constexpr unsigned last_worker = ~0u;
  unsigned comm_worker = last_worker;
  std::size_t buffer_bytes = std::size_t{64} << 10;    // per buffer, 4 KiB .. 4 MiB
  std::size_t max_pending_bytes = 64u << 20;          // sealed, unsent bytes before producers wait
  std::size_t max_message_bytes = 1u << 30;           // largest item accepted (sent by the large path)
  unsigned flush_delay_us = 100;                      // a partial buffer waits at most this long
  unsigned receives = 8;                              // pre-posted persistent receives, 2 .. 256
  bool crc = false;                                   // CRC32C over every buffer, checked on receipt
  // Producers append without a lock where the kernel has membarrier
  // (Linux 4.14); false: every append takes its outbox's lock.
  bool fast_append = true;
  thread_level init_level = thread_level::multiple;   // requested when strata initialises MPI
  // Failure detection: a buffer to every peer at least every heartbeat_ms
  // (an empty one when there is nothing to say); a peer silent for
  // deadline_ms makes this rank print who and since when, and exit with
  // status 75. 0: never (the default under progress=caller, where a rank
  // computing outside the session's calls sends nothing).
  unsigned heartbeat_ms = 500;
  unsigned deadline_ms = 5000;
  bool deadline_set = false;  // deadline_ms given explicitly (then it applies under progress=caller too)
  // actor_at waits this long for the rank to publish the name, then fails.
  unsigned lookup_ms = 10000;

  // STRATA_MPI_MODE=throughput|latency, STRATA_MPI_PROGRESS=auto|thread|worker|caller,
  // STRATA_MPI_COMM_WORKER (a worker index; checked against the runtime at session start),
  // STRATA_MPI_BUFFER_BYTES, STRATA_MPI_MAX_PENDING_BYTES, STRATA_MPI_FLUSH_US,
  // STRATA_MPI_RECEIVES, STRATA_MPI_CRC=0|1, STRATA_MPI_FAST_APPEND=0|1,
  // STRATA_MPI_THREAD_LEVEL=funneled|serialized|multiple,
  // STRATA_MPI_HEARTBEAT_MS, STRATA_MPI_DEADLINE_MS (0: no deadline), STRATA_MPI_LOOKUP_MS.
  // A bad value is a config_error naming the variable and what it accepts.
  static config from_env();
  // Throws config_error naming the first field out of range.
  void validate() const;
};

// The session's own communicator, as a Fortran handle (MPI_Comm_f2c gives
// the MPI_Comm; <mpi.h> stays out of this header).
struct communicator {
  int fortran = 0;
};

struct peer_stats {
  int rank = 0;
  std::uint64_t items_sent = 0, bytes_sent = 0, buffers_sent = 0;
  std::uint64_t items_received = 0, bytes_received = 0, buffers_received = 0;
  std::uint64_t flush_full = 0, flush_idle = 0, flush_timer = 0, flush_latency = 0, large_sent = 0;
  double last_heard_s = -1;  // seconds since this peer's last buffer; -1: never
};

struct session_stats {
  int rank = 0;
  int size = 0;
  std::string thread_level;
  std::string progress;
  int comm_worker = -1;  // progress=worker: the comm worker's index
  std::vector<peer_stats> peers;
  std::vector<std::pair<std::string, std::uint64_t>> rejects;  // by reason
  std::uint64_t termination_rounds = 0;
  std::uint64_t quiescence_calls = 0;
  std::uint64_t tasks_run = 0;
  std::uint64_t tasks_failed = 0;    // remote calls run here that threw (post_at's are also reported on stderr)
  std::uint64_t actor_messages = 0;  // messages from other ranks delivered to this rank's actors
  std::uint64_t producer_waits = 0;  // times a producer waited for the pending-bytes cap
  std::uint64_t outboxes = 0;        // per-thread buffer sets made (a new thread reuses an ended one's)
  std::uint64_t slots_retired = 0;   // open buffers given back after their thread was quiet for 250 µs
  std::string to_json() const;
};

namespace detail {
class bridge;
// Where a reply goes: the future of a submit_at.
struct reply_sink {
  virtual ~reply_sink() = default;
  virtual void value(reader& r) = 0;  // may throw decode_error
  virtual void error(std::string what) = 0;
  virtual void dead_letter(std::string what) { error(std::move(what)); }  // an actor's ask found no actor
};

template <class R>
struct reply_of final : reply_sink {
  explicit reply_of(std::shared_ptr<strata::detail::future_state<R>> s) : state(std::move(s)) {}
  void value(reader& r) override {
    if constexpr (std::is_void_v<R>) {
      state->value.emplace('\0');
    } else {
      state->value.emplace(r.value<R>());
    }
    state->finish();
  }
  void error(std::string what) override {
    state->error = std::make_exception_ptr(remote_error(what));
    state->finish();
  }
  std::shared_ptr<strata::detail::future_state<R>> state;
};
}  // namespace detail

class session {
 public:
  // Initialises MPI (MPI_Init_thread at config.init_level) unless the
  // application did; in either case duplicates MPI_COMM_WORLD.
  session(int& argc, char**& argv, runtime& rt, const config& c = config::from_env());
  // MPI already initialised by the application; duplicates `app_comm`
  // (a Fortran handle; default MPI_COMM_WORLD).
  explicit session(runtime& rt, const config& c = config::from_env());
  session(runtime& rt, communicator app_comm, const config& c = config::from_env());
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  // Stops the progress, cancels the pre-posted receives, frees the
  // communicators, and finalises MPI only if the session initialised it.
  // Call wait_quiescent() first: what is still in flight is dropped.
  ~session();

  int rank() const noexcept;
  int size() const noexcept;
  communicator comm() const noexcept;
  thread_level level() const noexcept;
  progress_mode progress_kind() const noexcept;  // thread or caller
  bool owns_mpi() const noexcept;                 // the session initialised MPI (and finalises it)

  // Runs fn(args...) on rank `rank` (on one of its workers); the future
  // holds its result, or remote_error naming the function and rank.
  template <class F, class... Args>
  auto submit_at(int rank, F* fn, Args&&... args) -> future<typename detail::fn_traits<F*>::result>;
  // As submit_at without a result (exceptions are counted and reported on
  // the rank that ran it).
  template <class F, class... Args>
  void post_at(int rank, F* fn, Args&&... args);

  // Remote actors. publish makes a local actor reachable by `name` from
  // every rank (a name is published once per rank; usage_error otherwise).
  // actor_at returns a handle to the actor `rank` published under `name`:
  // send and ask on it cross ranks with the local guarantees (one message
  // at a time, FIFO per sender and receiver, an ask to a gone actor fails
  // with dead_letter_error; an exception in receive comes back as
  // remote_error naming the actor and rank). It waits up to
  // config::lookup_ms for the name to be published there, then throws
  // usage_error naming the rank, the name and what that rank did publish;
  // a name published as another actor type is a usage_error too. Messages
  // and replies cross by value (<strata/mpi/serialize.hpp>).
  template <class T>
  void publish(const actor_ref<T>& ref, std::string_view name) {
    publish_address(ref.address(), strata::detail::actor_type_id(typeid(T)), typeid(T), name);
  }
  template <class T>
  actor_ref<T> actor_at(int rank, std::string_view name) {
    return actor_ref<T>(&m_rt.core(), lookup(rank, name, typeid(T)));
  }

  // Collective: returns on every rank once no task, reply or transfer
  // started through the bridge is in flight anywhere. Call it from one
  // thread per rank, the same number of times on every rank.
  void wait_quiescent();
  // Sends every partially filled buffer now.
  void flush();
  // One progress pass on the calling thread (progress_mode::caller: the
  // session's thread must call this, get() or wait_quiescent() to make
  // progress). With a progress thread, a thread that waits for a message
  // may call it to help: it runs a pass when the progress thread is not in
  // one (and returns 0 when it is), so what it waits for is received on
  // the spot instead of being handed over by another thread.
  std::size_t progress();
  // f.get(), making progress meanwhile when the caller is the MPI owner.
  template <class T>
  T get(future<T>& f);
  // Runs fn holding the bridge's MPI lock: the application's own MPI calls
  // under MPI_THREAD_SERIALIZED go here. Keep them short and non-blocking:
  // while fn runs the bridge makes no progress and sends no heartbeats.
  template <class F>
  decltype(auto) serialized(F&& fn);

  session_stats stats() const;

 private:
  // A call whose arguments have a fixed encoded size up to this many bytes
  // is encoded on the stack (detail::put_fixed), not in the scratch buffer.
  static constexpr std::size_t k_stack_call = 256;
  template <class F>
  static const detail::remote_entry& entry_of(F* fn);
  template <class F, class... Args>
  void encode_call(std::vector<std::byte>& payload, F* fn, std::uint64_t request, Args&&... args) const;
  template <class F, class... Args>
  static void encode_fixed_call(std::byte* out, F* fn, std::uint64_t request, Args&&... args);
  void post_task(int rank, const std::byte* payload, std::size_t n);
  void publish_address(actor_address a, std::uint64_t type, const std::type_info& t, std::string_view name);
  actor_address lookup(int rank, std::string_view name, const std::type_info& t);
  std::uint64_t expect_reply(int rank, std::unique_ptr<detail::reply_sink> sink);
  void lock_mpi();
  void unlock_mpi() noexcept;
  // With a progress thread or comm worker: passes on this thread while
  // ready(f) is false, for up to 200 µs.
  void help_wait(bool (*ready)(const void*), const void* f);
  bool owner_here() const noexcept;

  runtime& m_rt;
  std::unique_ptr<detail::bridge> m_b;
};

template <class F>
const detail::remote_entry& session::entry_of(F* fn) {
  // Entries never move or go away once registered: a per-thread cache of
  // the last function looked up spares the registry's lock per call.
  thread_local const void* last_fn = nullptr;
  thread_local const detail::remote_entry* last_entry = nullptr;
  const void* key = reinterpret_cast<const void*>(fn);
  const detail::remote_entry* e = key == last_fn ? last_entry : detail::find_remote(key);
  if (e == nullptr) {
    throw usage_error("strata::mpi: this function is not a remote function: register it with "
                      "STRATA_MPI_REMOTE(name) at namespace scope");
  }
  last_fn = key;
  last_entry = e;
  return *e;
}

// The payload of a call: the function's id, the request (0: no reply), the
// arguments converted to the function's parameter types.
template <class F, class... Args>
void session::encode_call(std::vector<std::byte>& payload, F* fn, std::uint64_t request, Args&&... args) const {
  using tuple = typename detail::fn_traits<F*>::args;
  static_assert(sizeof...(Args) == std::tuple_size_v<tuple>, "strata::mpi: wrong number of arguments for fn");
  static_assert(std::is_constructible_v<tuple, Args&&...>, "strata::mpi: the arguments do not convert to fn's");
  const detail::remote_entry& e = entry_of(fn);
  writer w(payload);
  w.value(e.id);
  w.value(request);
  w.value(tuple(std::forward<Args>(args)...));
}

// The same bytes, into `out` (16 + fixed_size<args> bytes).
template <class F, class... Args>
void session::encode_fixed_call(std::byte* out, F* fn, std::uint64_t request, Args&&... args) {
  using tuple = typename detail::fn_traits<F*>::args;
  static_assert(sizeof...(Args) == std::tuple_size_v<tuple>, "strata::mpi: wrong number of arguments for fn");
  static_assert(std::is_constructible_v<tuple, Args&&...>, "strata::mpi: the arguments do not convert to fn's");
  const std::uint64_t id = entry_of(fn).id;
  std::memcpy(out, &id, sizeof id);
  std::memcpy(out + sizeof id, &request, sizeof request);
  detail::put_fixed(out + 2 * sizeof(std::uint64_t), tuple(std::forward<Args>(args)...));
}

template <class F, class... Args>
auto session::submit_at(int rank, F* fn, Args&&... args) -> future<typename detail::fn_traits<F*>::result> {
  using R = typename detail::fn_traits<F*>::result;
  constexpr std::size_t fixed = detail::fixed_size<typename detail::fn_traits<F*>::args>();
  auto st = std::make_shared<strata::detail::future_state<R>>(&m_rt.core());
  // Encoded first: an unregistered function or a bad argument throws before
  // a request is recorded; the request goes in after.
  if constexpr (fixed <= k_stack_call) {
    std::array<std::byte, 2 * sizeof(std::uint64_t) + fixed> payload;
    encode_fixed_call(payload.data(), fn, 0, std::forward<Args>(args)...);
    const std::uint64_t request = expect_reply(rank, std::make_unique<detail::reply_of<R>>(st));
    std::memcpy(payload.data() + sizeof(std::uint64_t), &request, sizeof request);
    post_task(rank, payload.data(), payload.size());
  } else {
    scratch payload;
    encode_call(payload.bytes(), fn, 0, std::forward<Args>(args)...);
    const std::uint64_t request = expect_reply(rank, std::make_unique<detail::reply_of<R>>(st));
    std::memcpy(payload.bytes().data() + sizeof(std::uint64_t), &request, sizeof request);
    post_task(rank, payload.bytes().data(), payload.bytes().size());
  }
  return future<R>(std::move(st));
}

template <class F, class... Args>
void session::post_at(int rank, F* fn, Args&&... args) {
  constexpr std::size_t fixed = detail::fixed_size<typename detail::fn_traits<F*>::args>();
  if constexpr (fixed <= k_stack_call) {
    std::array<std::byte, 2 * sizeof(std::uint64_t) + fixed> payload;
    encode_fixed_call(payload.data(), fn, 0, std::forward<Args>(args)...);
    post_task(rank, payload.data(), payload.size());
  } else {
    scratch payload;
    encode_call(payload.bytes(), fn, 0, std::forward<Args>(args)...);
    post_task(rank, payload.bytes().data(), payload.bytes().size());
  }
}

template <class T>
T session::get(future<T>& f) {
  if (f.ready()) return f.get();
  // The caller waits: it has stopped producing, so what it posted leaves now.
  flush();
  const progress_mode how = progress_kind();
  if (how == progress_mode::caller && owner_here()) {
    while (!f.ready()) {
      if (progress() == 0) std::this_thread::yield();
    }
  } else if (how != progress_mode::caller && !this_worker()) {
    // (On a worker, f.get() runs tasks and the comm worker's passes while it waits.)
    help_wait([](const void* p) { return static_cast<const future<T>*>(p)->ready(); }, &f);
  }
  return f.get();
}

template <class F>
decltype(auto) session::serialized(F&& fn) {
  struct unlock_on_exit {
    session* s;
    ~unlock_on_exit() { s->unlock_mpi(); }
  };
  lock_mpi();
  unlock_on_exit guard{this};
  return std::forward<F>(fn)();
}

}  // namespace strata::mpi
