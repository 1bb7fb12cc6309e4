// actor_system: the actors' state of one runtime, and the entry points the
// inline paths of actor.hpp call.
//
// The actors plug into the core through its seams and nothing else:
// - a work source per worker (actor_worker, src/actor_worker.hpp) holds
//   the worker's actor table and its FIFO of due turns; the worker loop
//   polls it for turns, and a message frame that reaches the worker's inbox
//   is routed to it (completion::routed, sink = this system's source index)
//   and goes into its actor's mailbox;
// - the actor_system itself is a subsystem: it adds the actors' per-worker
//   counters to runtime_stats and stops the load monitor at shutdown.
// Messages are task frames and are counted as such (spawned when sent,
// executed when handled), so wait_idle needs nothing more from the actors.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <strata/actors/actor_address.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/subsystem.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/ext/worker.hpp>

namespace strata {
class actor_base;
class actor_context;
}  // namespace strata

namespace strata::detail {

class actor_worker;  // src/actor_worker.hpp
struct remote_port;  // ext/remote.hpp

class actor_system final : public subsystem {
 public:
  static constexpr char key = 0;  // subsystem_key: &actor_system::key

  explicit actor_system(runtime_core& core);
  ~actor_system() override;

  void add_stats(runtime_stats& s) const override;
  void on_shutdown() noexcept override;  // stops the load monitor

  actor_worker& at(unsigned worker) const noexcept { return *m_workers[worker]; }
  // The actors of the worker that `a` names, or nullptr for an address of
  // another rank or of a worker this runtime does not have.
  actor_worker* home_of(actor_address a) const noexcept {
    return a.rank() == rank && a.worker() < m_workers.size() ? m_workers[a.worker()] : nullptr;
  }

  runtime_core& core;
  // The rank bits of this runtime's addresses (0 until the MPI bridge sets
  // them, before any actor exists: it refuses once `spawned` is set).
  unsigned rank = 0;
  // Set by the first spawn. Relaxed: the session's check of a usage rule,
  // not a synchronisation.
  std::atomic<bool> spawned{false};
  // The transport to other ranks while an MPI session is open (ext/remote.hpp).
  // release by the session that sets or clears it; acquire by port_for, so a
  // sender sees the session's state built.
  std::atomic<remote_port*> remote{nullptr};
  const unsigned budget;  // messages per turn (config::actor_budget)
  unsigned sink = 0;      // index of the actor_worker sources (a message frame's sink)
  // Round-robin spawn counter (RMW by spawners outside the workers).
  std::atomic<std::uint32_t> next_worker{0};
  // The supervisor, guarded by its mutex (read on each failure, which is rare).
  std::mutex supervisor_mutex;
  strata::supervisor supervisor;

  // Load monitor (migration.cpp): a thread that samples the workers every
  // period and asks a busy worker to move an elastic actor to a light one.
  std::thread monitor;
  std::mutex monitor_mutex;            // guards monitor_stop
  std::condition_variable monitor_cv;  // shutdown wakes the monitor
  bool monitor_stop = false;

 private:
  std::vector<actor_worker*> m_workers;  // owned by the core's work sources
};

// The actor system of rt, attached on first use.
actor_system& actors_of(runtime_core& rt);

// The actor whose turn runs on this thread now, and its context; actor is
// nullptr while a message frame runs as a dead letter. Set by the turn loop
// (turns.cpp) for each turn and restored after it, so nested turns (a
// receive that waits and helps) and tick mode see their own.
struct turn_state {
  actor_base* actor = nullptr;
  actor_context* ctx = nullptr;
};
inline thread_local turn_state t_turn __attribute__((tls_model("initial-exec")));

// True when `a` names an actor of worker w of this runtime (rank, worker).
inline bool is_on(const actor_system& sys, const worker& w, actor_address a) noexcept {
  constexpr unsigned k_shift = actor_address::k_slot_bits + actor_address::k_generation_bits;
  return (a.bits() >> k_shift) == ((std::uint64_t{sys.rank} << actor_address::k_worker_bits) | w.index);
}

// Puts message t, addressed to an actor of w, into its mailbox (or makes it
// a dead letter); called on w only, with aw the actors of w (turns.cpp).
void send_local(actor_worker& aw, worker& w, task* t) noexcept;
// Routes a message frame (tag = destination): the local mailbox, another
// worker's inbox, or a usage_error for an address of another runtime
// (actor_system.cpp).
void send_message(actor_system& sys, task* t);
// As send_message, always through the destination worker's inbox, even from
// that worker: a transport delivering received messages (the MPI bridge's
// passes) may run on the actor's worker one time and on another thread the
// next, and only one path keeps them in arrival order (the inbox is FIFO;
// a direct send from the worker would overtake what waits in it).
void deliver_message(actor_system& sys, task* t);
// A message frame decoded from another rank's message: deliver_message, or,
// in_batch (the decoding runs on the actor's worker, in a remote_batch that
// its inbox brought there in order: ext/remote.hpp), straight into the
// mailbox, counted as if it had come through the inbox.
void deliver_received(actor_system& sys, task* t, bool in_batch);

// The kinds of routed frame the actors' work source accepts (task::kind).
inline constexpr std::uint8_t k_message_frame = 0;  // one message (tag: its address)
inline constexpr std::uint8_t k_batch_frame = 1;    // a remote_batch (ext/remote.hpp)

}  // namespace strata::detail
