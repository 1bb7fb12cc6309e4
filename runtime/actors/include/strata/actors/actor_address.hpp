// actor_address and supervision: the value types of the actor API
// (actor.hpp has the rest).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <string>

namespace strata {

// rank (16 bits) | worker (12) | slot (20) | generation (16). Generations start
// at 1, so a zero address is never valid.
class actor_address {
 public:
  static constexpr unsigned k_generation_bits = 16;
  static constexpr unsigned k_slot_bits = 20;
  static constexpr unsigned k_worker_bits = 12;
  static constexpr unsigned k_rank_bits = 16;
  static constexpr std::uint32_t k_max_slots = 1u << k_slot_bits;
  static constexpr unsigned k_max_workers = 1u << k_worker_bits;

  constexpr actor_address() = default;
  static constexpr actor_address make(unsigned rank, unsigned worker, std::uint32_t slot, std::uint16_t gen) {
    return actor_address((std::uint64_t{rank} << 48) | (std::uint64_t{worker} << 36) | (std::uint64_t{slot} << 16) |
                         gen);
  }
  static constexpr actor_address from_bits(std::uint64_t b) { return actor_address(b); }

  constexpr std::uint64_t bits() const noexcept { return m_bits; }
  constexpr unsigned rank() const noexcept { return static_cast<unsigned>(m_bits >> 48); }
  constexpr unsigned worker() const noexcept { return static_cast<unsigned>((m_bits >> 36) & 0xfff); }
  constexpr std::uint32_t slot() const noexcept { return static_cast<std::uint32_t>((m_bits >> 16) & 0xfffff); }
  constexpr std::uint16_t generation() const noexcept { return static_cast<std::uint16_t>(m_bits); }
  constexpr bool valid() const noexcept { return generation() != 0; }
  std::string to_string() const;  // "actor 0:3:17#2" (rank:worker:slot#generation)

  friend constexpr bool operator==(actor_address, actor_address) = default;

 private:
  constexpr explicit actor_address(std::uint64_t b) : m_bits(b) {}
  std::uint64_t m_bits = 0;
};

struct actor_failure {
  actor_address address;
  std::exception_ptr error;
  std::string what;
  unsigned restarts = 0;  // restarts of this actor so far
};

enum class supervision { stop, restart };
using supervisor = std::function<supervision(const actor_failure&)>;

}  // namespace strata
