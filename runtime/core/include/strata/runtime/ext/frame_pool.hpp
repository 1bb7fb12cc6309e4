// frame_pool: per-worker allocator of task frames.
//
// The owner allocates and frees with plain list operations. A frame freed
// by another worker (a thief ran it, an actor on another worker received
// it) goes back to its home pool's atomic "remote" stack; the owner takes
// the whole stack with one exchange when its own list runs dry, so there is
// no ABA (nobody pops single nodes from the shared stack).
//
// Frames going home travel in batches: the freeing worker strings up to
// k_return_batch frames of one home on a private chain (its own pool's
// outgoing chain) and pushes the chain with one CAS when it is full, when
// a frame of another home comes, or when the worker runs out of work
// (flush_outgoing, before it spins or parks). One CAS per frame made the
// remote stack's line the busiest line of a producer/consumer pair: while
// the consumer kept up, the producer's free list was nearly empty, so it
// exchanged the stack every few frames and the line crossed cores about
// twice per frame. At most k_return_batch - 1 frames per worker wait on a
// chain; a pool that finds its stack empty takes a new slab meanwhile.
// Slabs come from numa_alloc with the worker's placement (its NUMA node when
// pinned) and are released when the pool dies. Every frame of a pool has
// its worker as `home` from the slab's creation on (a frame only ever goes
// back to the pool it came from), so a spawn does not write it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include <strata/config.hpp>
#include <strata/numa_alloc/memory.hpp>
#include <strata/runtime/ext/assert.hpp>
#include <strata/runtime/ext/task.hpp>

namespace strata::detail {

class frame_pool {
 public:
  static constexpr std::size_t k_slab_frames = 512;  // 64 KiB per slab
  static constexpr std::size_t k_slab_bytes = k_slab_frames * sizeof(task);

  explicit frame_pool(memory_placement where = memory_placement::unbound()) : m_where(where) {}
  frame_pool(const frame_pool&) = delete;
  frame_pool& operator=(const frame_pool&) = delete;
  ~frame_pool() {
    for (void* s : m_slabs) numa_deallocate(s, k_slab_bytes, k_destructive_size);
  }

  // The worker index stamped into every frame's `home`; set before the
  // first allocate.
  void set_home(std::uint32_t home) noexcept { m_home = home; }

  // Owner only. The frame's `home` is already this pool's worker.
  task* allocate() {
    task* t = m_free;
    if (t == nullptr) t = refill();
    m_free = t->next.load(std::memory_order_relaxed);  // relaxed: owner-private list
    STRATA_ASSERT(t->home == m_home, "a pool hands out only its own frames");
    return t;
  }
  // Owner only: a frame from the free list, or nullptr when it is empty
  // (allocate refills it). No call, so callers' fast paths stay leaf code.
  task* try_allocate() noexcept {
    task* t = m_free;
    if (t != nullptr) m_free = t->next.load(std::memory_order_relaxed);  // relaxed: owner-private list
    return t;
  }
  // Owner only.
  void free_local(task* t) noexcept {
    STRATA_ASSERT(t->home == m_home, "a frame goes back to the pool it came from");
    t->next.store(m_free, std::memory_order_relaxed);  // relaxed: owner-private list
    m_free = t;
  }
  // Owner of this pool, for a frame of another pool `home`: onto the
  // outgoing chain, pushed to home when full (see the top of the file).
  void free_to(frame_pool& home, task* t) noexcept {
    STRATA_ASSERT(t->home == home.m_home && &home != this, "a frame of another pool goes to its own home");
    if (&home != m_out_home) {
      flush_outgoing();
      m_out_home = &home;
    }
    t->next.store(m_out_head, std::memory_order_relaxed);  // relaxed: private chain until pushed
    if (m_out_head == nullptr) m_out_tail = t;
    m_out_head = t;
    if (++m_out_count == k_return_batch) flush_outgoing();
  }
  // Owner of this pool: pushes the outgoing chain home, if any.
  void flush_outgoing() noexcept {
    if (m_out_head == nullptr) return;
    m_out_home->push_remote(m_out_head, m_out_tail);
    m_out_head = nullptr;
    m_out_tail = nullptr;
    m_out_count = 0;
  }
  std::size_t slabs() const noexcept { return m_slabs.size(); }

  static constexpr std::uint32_t k_return_batch = 32;

 private:
  // Pushes the chain first .. last (linked through next) in one CAS.
  void push_remote(task* first, task* last) noexcept {
    task* head = m_remote.load(std::memory_order_relaxed);  // relaxed: the CAS below validates it
    do {
      last->next.store(head, std::memory_order_relaxed);  // relaxed: published by the release CAS
      // release: publishes the chain's next links to the owner's acquire exchange in refill.
    } while (!m_remote.compare_exchange_weak(head, first, std::memory_order_release, std::memory_order_relaxed));
  }

  task* refill() {
    // acquire: pairs with the release CAS in push_remote.
    task* r = m_remote.exchange(nullptr, std::memory_order_acquire);
    if (r != nullptr) return r;
    void* mem = numa_allocate(k_slab_bytes, m_where, k_destructive_size);
    try {
      m_slabs.push_back(mem);
    } catch (...) {
      numa_deallocate(mem, k_slab_bytes, k_destructive_size);
      throw;
    }
    task* frames = static_cast<task*>(mem);
    for (std::size_t i = 0; i < k_slab_frames; ++i) {
      ::new (&frames[i]) task{};
      frames[i].home = m_home;
    }
    // relaxed: a fresh slab is private to the owner until its frames are pushed.
    for (std::size_t i = 0; i + 1 < k_slab_frames; ++i) frames[i].next.store(&frames[i + 1], std::memory_order_relaxed);
    frames[k_slab_frames - 1].next.store(nullptr, std::memory_order_relaxed);
    return frames;
  }

  task* m_free = nullptr;  // owner-private free list
  std::uint32_t m_home = k_no_home;
  memory_placement m_where;
  std::vector<void*> m_slabs;
  // Owner-private: frames of m_out_home on their way back (free_to).
  frame_pool* m_out_home = nullptr;
  task* m_out_head = nullptr;
  task* m_out_tail = nullptr;
  std::uint32_t m_out_count = 0;
  // Written by any thread (CAS push), taken by the owner (exchange).
  alignas(k_destructive_size) std::atomic<task*> m_remote{nullptr};
};

}  // namespace strata::detail
