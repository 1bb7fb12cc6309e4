// One resource's lock: a 32-bit atomic word,
//
//   bit 31: write lock | bits 24-30: readers (at most 127) |
//   bits 16-23: holder worker | bits 0-15: ticket of a waiting writer
//
// and the inline path of taking it (a lock that is plainly free is one CAS)
// and looking at it. The all-or-none acquisition of a task's list, the
// queues and the re-evaluation on release are in src/ (locks.cpp,
// dispatch.cpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include <strata/access/handles.hpp>

namespace strata::detail {

class access_system;  // src/access_system.hpp

// One resource: its lock word and the reader front-run count, on a cache
// line of its own (tasks on neighbouring resources run on other workers).
struct alignas(64) resource_state {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> front_runs{0};  // readers that overtook a registered writer
  // Blocked requests that ask for this resource: RMW (seq_cst) under the
  // dispatcher's mutex, read (seq_cst) by releasers after their release.
  std::atomic<std::uint32_t> waiters{0};
  std::uint32_t id = 0;
  // Bumped by each release (runtime::release_resource): a handle whose
  // generation differs is stale. Written under the access system's
  // create_mutex; read relaxed where a handle is checked.
  std::atomic<std::uint32_t> generation{0};
  const runtime_core* owner = nullptr;
  access_system* sys = nullptr;  // the lock-mode state of the owner runtime
};

static_assert(alignof(resource_state) >= 2, "access_lock keeps the mode in bit 0 of the pointer");

// One requested lock: the resource and the mode in one word (write: bit 0).
struct access_lock {
  std::uintptr_t bits = 0;
  access_lock() = default;
  access_lock(resource_state* r, access_mode m) noexcept
      : bits(reinterpret_cast<std::uintptr_t>(r) | (m == access_mode::write ? 1u : 0u)) {}
  resource_state* res() const noexcept { return reinterpret_cast<resource_state*>(bits & ~std::uintptr_t{1}); }
  access_mode mode() const noexcept { return (bits & 1u) != 0 ? access_mode::write : access_mode::read; }
};

// The lock word's fields (the layout at the top of this file).
namespace lock_word {
inline constexpr std::uint32_t k_write = 1u << 31;
inline constexpr std::uint32_t k_reader = 1u << 24;
inline constexpr std::uint32_t k_readers_mask = 0x7fu << 24;
inline constexpr std::uint32_t k_max_readers = 127;
inline constexpr std::uint32_t k_holder_shift = 16;
inline constexpr std::uint32_t k_holder_mask = 0xffu << 16;
inline constexpr std::uint32_t k_ticket_mask = 0xffffu;

inline std::uint32_t readers_of(std::uint32_t w) noexcept { return (w & k_readers_mask) >> 24; }
inline unsigned holder_of(std::uint32_t w) noexcept { return (w & k_holder_mask) >> k_holder_shift; }
inline std::uint32_t with_holder(std::uint32_t w, unsigned h) noexcept {
  return (w & ~k_holder_mask) | ((static_cast<std::uint32_t>(h) & 0xffu) << k_holder_shift);
}
}  // namespace lock_word

// One lock for a frame task (which never registers as a waiting writer):
// false when the word refuses it or changed under us. seq_cst CAS: pairs
// with every other CAS and RMW on lock words and with the dispatcher's
// seq_cst `waiters` announcements (dispatch.cpp, announce).
inline bool try_lock_quick(resource_state& r, access_mode mode, unsigned holder) noexcept {
  using namespace lock_word;
  std::uint32_t w = r.word.load(std::memory_order_relaxed);  // relaxed: only the CAS's expected value
  if (mode == access_mode::write) {
    if ((w & (k_write | k_readers_mask)) != 0) return false;
    if (!r.word.compare_exchange_strong(w, with_holder(w | k_write, holder), std::memory_order_seq_cst,
                                        std::memory_order_relaxed)) {
      return false;
    }
    r.front_runs.store(0, std::memory_order_relaxed);  // relaxed: read under the same word's protocol
    return true;
  }
  if ((w & (k_write | k_ticket_mask)) != 0 || readers_of(w) == k_max_readers) return false;
  const std::uint32_t next = readers_of(w) == 0 ? with_holder(w + k_reader, holder) : w + k_reader;
  return r.word.compare_exchange_strong(w, next, std::memory_order_seq_cst, std::memory_order_relaxed);
}

// Heuristic, no lock taken: true when some lock is held in a way that
// refuses it (or a writer waits ahead of a reader).
inline bool looks_busy(const access_lock* locks, std::size_t n) noexcept {
  using namespace lock_word;
  for (std::size_t i = 0; i < n; ++i) {
    // relaxed: a hint; the all-or-none try decides.
    const std::uint32_t w = locks[i].res()->word.load(std::memory_order_relaxed);
    if ((w & k_write) != 0 || (w & k_ticket_mask) != 0) return true;
    if (locks[i].mode() == access_mode::write && readers_of(w) != 0) return true;
  }
  return false;
}

}  // namespace strata::detail
