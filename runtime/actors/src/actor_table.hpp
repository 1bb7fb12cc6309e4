// actor_table: the actors pinned to one worker. Owner-private: only the
// worker thread reads or writes it (other threads reach its actors through
// the worker's inbox), so nothing here is atomic.
//
// Slots are found by the slot bits of an address: a two-level table of
// 4096-slot chunks, created as slots are installed (a slot number handed
// out by another thread via worker::fresh_slots is installed when its
// install task arrives, and messages from that thread follow it through
// the same FIFO inbox). A slot carries a generation; a message whose
// generation differs is a dead letter. A stopped actor's slot gets the
// next generation and is reused by this worker's own spawns; a forwarding
// slot released by path compression (forwarding.cpp) gets the next
// generation and is reused by migrations to this worker.
//
// An actor's identity is its home: the address it was spawned at. self()
// and failure reports give the home; after a migration the home slot
// forwards, and forwarding.cpp keeps it one hop from the actor.
//
// Each slot embeds its turn frame: when the actor has mail and no turn is
// queued, the frame goes onto the worker's ready FIFO (actor_worker), which
// the worker polls as a work source. A turn handles at most
// actor_system::budget messages, then queues the actor again behind the
// others.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <strata/actors/actor.hpp>

namespace strata::detail {

enum class slot_state : std::uint8_t {
  empty,       // never installed, or stopped and free again
  live,        // has an actor
  stopped,     // its actor stopped or failed for good: messages are dead letters
  forwarding,  // its actor moved to another worker: messages follow it
};

struct alignas(64) actor_slot {  // its turn frame on whole cache lines
  actor_slot() = default;
  actor_slot(const actor_slot&) = delete;
  actor_slot& operator=(const actor_slot&) = delete;
  ~actor_slot() { delete factory; }

  task turn;  // embedded turn frame (home = k_embedded): links the slot into the ready FIFO
  actor_base* actor = nullptr;
  // Owned (deleted by retire_slot and the destructor). Not a unique_ptr:
  // libstdc++'s unique_ptr is not standard-layout under clang, and
  // slot_of_turn needs the slot to be (clang-tidy found it).
  actor_factory* factory = nullptr;
  std::uint16_t generation = 0;  // generation of the current (or last) actor; 0: never used
  slot_state state = slot_state::empty;
  affinity aff = affinity::elastic;
  bool scheduled = false;  // its turn frame is queued or running
  bool running = false;    // its turn is on the stack (nested waits included)
  unsigned restarts = 0;
  task* mail_head = nullptr;  // mailbox: FIFO of message frames, linked through task::next
  task* mail_tail = nullptr;
  std::uint32_t depth = 0;
  std::uint64_t handled = 0;       // messages handled (for the load monitor)
  std::uint64_t handled_seen = 0;  // `handled` at the last rebalance look
  std::uint64_t forward = 0;  // forwarding: the address at the next worker
  std::uint64_t home = 0;     // the actor's identity: the address it was spawned at
  std::uint32_t index = 0;
  // Home slot only (forwarding.cpp): a hop release is in flight; mail that
  // arrives meanwhile waits in mail_head/mail_tail (no turn is queued).
  bool refreshing = false;
  bool refresh_again = false;  // another move was reported during it
};

inline std::uint16_t next_generation(std::uint16_t g) noexcept {
  return g == 0xffff ? 1 : static_cast<std::uint16_t>(g + 1);
}

class actor_table {
 public:
  static constexpr std::uint32_t k_chunk = 4096;
  static constexpr std::uint32_t k_chunks = actor_address::k_max_slots / k_chunk;

  // fresh_slots: the slot counter of the table's worker (actor_worker),
  // shared with spawners on other threads.
  actor_table(unsigned worker, std::atomic<std::uint32_t>& fresh_slots) : m_worker(worker), m_fresh(fresh_slots) {}
  actor_table(const actor_table&) = delete;
  actor_table& operator=(const actor_table&) = delete;
  ~actor_table();  // destroys the actors still installed

  // The slot, or nullptr when its chunk was never created.
  actor_slot* find(std::uint32_t index) noexcept {
    auto& c = m_chunks[index / k_chunk];
    return c ? &c[index % k_chunk] : nullptr;
  }
  actor_slot& at(std::uint32_t index);  // creates the chunk

  // A slot number for a spawn by this worker: a freed one, else a fresh one.
  std::uint32_t take_slot();
  void free_slot(std::uint32_t index) { m_free.push_back(index); }

  // Every live slot (the monitor's view), in slot order.
  template <class F>
  void for_each_live(F&& f) {
    for (auto& c : m_chunks) {
      if (!c) continue;
      for (std::uint32_t i = 0; i < k_chunk; ++i) {
        if (c[i].state == slot_state::live) f(c[i]);
      }
    }
  }

  std::uint64_t live = 0;  // installed actors

 private:
  unsigned m_worker;
  std::atomic<std::uint32_t>& m_fresh;
  std::array<std::unique_ptr<actor_slot[]>, k_chunks> m_chunks;
  std::vector<std::uint32_t> m_free;
};

// The slot whose embedded turn frame is t (turn is its first member).
inline actor_slot& slot_of_turn(task* t) noexcept {
  static_assert(std::is_standard_layout_v<actor_slot> && offsetof(actor_slot, turn) == 0,
                "a turn frame's address is its slot's");
  return *reinterpret_cast<actor_slot*>(t);
}

}  // namespace strata::detail
