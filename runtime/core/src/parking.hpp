// Spinning, parking and waking (parking.cpp tells the protocol). Internal
// to the core.
#pragma once

#include <strata/runtime/ext/core.hpp>

namespace strata::detail {

inline constexpr std::uint64_t k_spinner = 1;
inline constexpr std::uint64_t k_sleeper = std::uint64_t{1} << 32;
inline std::uint64_t spinners_of(std::uint64_t word) noexcept { return word & 0xffffffffu; }
inline std::uint64_t sleepers_of(std::uint64_t word) noexcept { return word >> 32; }

// No work found: spin (Go's rules), then park until woken. Returns a task
// found meanwhile, or nullptr to re-loop (woken, a work source is ready, or
// stopping).
task* idle_phase(worker& w);

// Wakes the sleeper nearest to worker `near`, if any.
void wake_one(runtime_core& rt, unsigned near) noexcept;
// Wakes every worker (shutdown).
void wake_all(runtime_core& rt) noexcept;
// After publishing shared work near worker `near`: wakes a parked worker if
// nobody spins in its package (or in another package with sleepers).
void maybe_wake(runtime_core& rt, unsigned near) noexcept;

}  // namespace strata::detail
