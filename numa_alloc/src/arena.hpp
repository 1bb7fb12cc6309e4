// arena: per-node memory for numa_alloc.
//
// The problem. Task frames, deque buffers, mailboxes and user arrays must
// sit on the node of the worker that uses them, and stay there: a block
// freed by a thread of another node must not be handed to that node next
// time, or its page (bound to the first node) becomes remote memory.
//
// The design.
// - Slots: one arena per NUMA node of the machine, one interleaved, one
//   unbound (plain memory). Every page of a slot is bound (mbind) to the
//   slot's policy before it is touched.
// - Large blocks (over 32 KiB): their own mapping, bound, with transparent
//   huge page advice from 2 MiB on. One header page in front of the block
//   records the slot and the mapped length; munmap on free.
// - Small blocks (16 B .. 32 KiB, powers of two): carved from 2 MiB chunks,
//   2 MiB aligned (so a block finds its chunk header by masking its
//   address), bound and huge-page advised. A chunk is cut into 64 KiB runs,
//   each run into blocks of one size class; run 0 holds the chunk header.
// - Per-thread caches: each thread keeps a free list per (slot, class),
//   refilled in batches from the slot's central list (a mutex per list: taken
//   once per batch, not per block) and spilled back half at a time.
// - Remote frees: a thread frees a block of its home node's slot into its
//   own cache; a block of another node goes straight back to that node's
//   central list (counted as a remote free). Blocks are never reused across
//   slots.
// - Statistics: per thread and slot, single-writer counters (relaxed
//   atomics, read racily by numa_stats()); a thread's totals move to the
//   slot's retired counters when it exits.
//
// Rejected: hwloc_alloc_membind per block (a system call per allocation);
// a global lock-free stack per class (ABA, and no node separation); glibc
// malloc arenas (they hand a freed chunk to whichever thread asks next).
//
// The arena set is process-wide and never destroyed: thread caches of
// threads that outlive main's static destructors may still return blocks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <strata/numa_alloc/memory.hpp>

namespace strata::numa_detail {

inline constexpr std::size_t k_page = 4096;
inline constexpr std::size_t k_chunk_bytes = std::size_t{2} << 20;
inline constexpr std::size_t k_run_bytes = std::size_t{64} << 10;
inline constexpr std::size_t k_runs_per_chunk = k_chunk_bytes / k_run_bytes;
inline constexpr std::size_t k_min_block = 16;
inline constexpr std::size_t k_small_max = std::size_t{32} << 10;
inline constexpr int k_classes = 12;  // 16 B << 0 .. 16 B << 11 = 32 KiB
inline constexpr std::uint64_t k_chunk_magic = 0x6b6e7568632e7473;  // "st.chunk"
inline constexpr std::uint64_t k_large_magic = 0x656772616c2e7473;  // "st.large"

struct free_block {
  free_block* next;
};

struct chunk_header {
  std::uint64_t magic;
  std::uint32_t slot;
};

struct large_header {
  std::uint64_t magic;
  std::uint32_t slot;
  std::size_t mapped;  // bytes mapped, header page included
  std::size_t user;    // bytes counted in use
};

// Counters of one (thread, slot): written by that thread only (relaxed
// load + store), read racily by numa_stats().
struct slot_counters {
  std::atomic<std::int64_t> in_use{0};
  std::atomic<std::uint64_t> allocations{0};
  std::atomic<std::uint64_t> frees{0};
  std::atomic<std::uint64_t> remote_frees{0};
};

// A slot's list of free blocks of one class, and the run being carved.
struct central_list {
  std::mutex mutex;  // guards everything below
  free_block* head = nullptr;
  std::size_t count = 0;
  char* bump = nullptr;  // next block of the current run
  char* bump_end = nullptr;
};

struct arena_slot {
  memory_placement where = memory_placement::unbound();
  central_list lists[k_classes];
  std::mutex chunk_mutex;  // guards the chunk being cut into runs
  char* chunk = nullptr;
  std::size_t next_run = k_runs_per_chunk;
  std::atomic<std::uint64_t> bytes_mapped{0};  // RMW by any thread
  slot_counters retired;                        // totals of exited threads (RMW under the registry mutex)
};

class thread_cache;

class arena_set {
 public:
  static arena_set& instance();

  // Slot of a node / of the interleaved / unbound arena.
  std::size_t node_slot(int node) const noexcept { return static_cast<std::size_t>(node); }
  std::size_t interleaved_slot() const noexcept { return m_slots.size() - 2; }
  std::size_t unbound_slot() const noexcept { return m_slots.size() - 1; }
  std::size_t slots() const noexcept { return m_slots.size(); }
  arena_slot& slot(std::size_t s) noexcept { return *m_slots[s]; }

  void* allocate(std::size_t bytes, std::size_t slot);
  void deallocate(void* p, std::size_t bytes) noexcept;

  numa_memory_stats stats();

  // Thread caches register so that stats() can sum them.
  void enrol(thread_cache* c);
  void retire(thread_cache* c) noexcept;

  // Central-list operations, used by the thread caches.
  std::size_t take_batch(std::size_t slot, int cls, free_block** out, std::size_t want);
  void give_back(std::size_t slot, int cls, free_block* head, free_block* tail, std::size_t n) noexcept;

 private:
  arena_set();
  // `requested`: the size a failure reports (what the caller asked for).
  char* map_bound(std::size_t len, std::size_t align, std::size_t slot, std::size_t requested);
  char* new_run(std::size_t slot);
  void* allocate_large(std::size_t bytes, std::size_t slot);

  std::vector<std::unique_ptr<arena_slot>> m_slots;
  std::mutex m_registry_mutex;
  std::vector<thread_cache*> m_caches;
};

// Size class of a small request: smallest c with 16 << c >= max(bytes, align).
inline int class_of(std::size_t bytes) noexcept {
  int c = 0;
  while ((k_min_block << c) < bytes) ++c;
  return c;
}
inline std::size_t class_bytes(int c) noexcept { return k_min_block << c; }

// The slot a small block belongs to (its chunk header).
inline std::uint32_t slot_of_block(const void* p) noexcept {
  // Pointer arithmetic back to the chunk's start, not a cast from the masked integer: the header
  // pointer keeps p's provenance (the chunk is one mapping).
  const char* c = static_cast<const char*>(p);
  const std::size_t into_chunk = reinterpret_cast<std::uintptr_t>(p) & (k_chunk_bytes - 1);
  const auto* h = reinterpret_cast<const chunk_header*>(c - into_chunk);
  return h->slot;
}

}  // namespace strata::numa_detail
