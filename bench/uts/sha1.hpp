// SHA-1 (FIPS 180-4), written for UTS node ids.
//
// UTS names every node by a 20-byte SHA-1 digest: the root is
// SHA1(16 zero bytes || seed as 4 big-endian bytes), child i of a node is
// SHA1(parent digest || i as 4 big-endian bytes), so a tree is reproducible
// from its seed, and any worker can expand any node without shared state.
// Every message UTS hashes (20 or 24 bytes) fits one 64-byte block with its
// padding, so a node costs one compression (80 rounds).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace strata_bench::uts {

using digest = std::array<std::uint8_t, 20>;

// SHA-1 of a message of any length.
digest sha1(const void* message, std::size_t length) noexcept;

}  // namespace strata_bench::uts
