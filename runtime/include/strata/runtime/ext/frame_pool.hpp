// frame_pool: per-worker allocator of task frames.
//
// The owner allocates and frees with plain list operations. A frame freed
// by another thread (a thief ran it) goes onto an atomic "remote" stack; the
// owner takes the whole stack with one exchange when its own list runs dry,
// so there is no ABA (nobody pops single nodes from the shared stack).
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
    t->next.store(m_free, std::memory_order_relaxed);  // relaxed: owner-private list
    m_free = t;
  }
  // Any thread.
  void free_remote(task* t) noexcept {
    task* head = m_remote.load(std::memory_order_relaxed);  // relaxed: the CAS below validates it
    do {
      t->next.store(head, std::memory_order_relaxed);  // relaxed: published by the release CAS
      // release: publishes t->next to the owner's acquire exchange in refill.
    } while (!m_remote.compare_exchange_weak(head, t, std::memory_order_release, std::memory_order_relaxed));
  }
  std::size_t slabs() const noexcept { return m_slabs.size(); }

 private:
  task* refill() {
    // acquire: pairs with the release CAS in free_remote.
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
  // Written by any thread (CAS push), taken by the owner (exchange).
  alignas(k_destructive_size) std::atomic<task*> m_remote{nullptr};
};

}  // namespace strata::detail
