// SHA-1 per FIPS 180-4 §6.1: 80 rounds over a 16-word schedule kept in a
// rolling window, message padded with 0x80, zeros and the 64-bit big-endian
// bit length. The round loops are fully unrolled (GCC and Clang both read
// `#pragma GCC unroll`): with constant indices the schedule stays in
// registers and the a..e rotation costs nothing, about 4x faster than the
// rolled loops, and UTS is one compression per node.
#include "uts/sha1.hpp"

#include <cstring>

namespace strata_bench::uts {
namespace {

constexpr std::array<std::uint32_t, 5> k_initial{0x67452301U, 0xEFCDAB89U, 0x98BADCFEU,
                                                 0x10325476U, 0xC3D2E1F0U};

constexpr std::uint32_t rotl(std::uint32_t x, int s) noexcept {
  return (x << s) | (x >> (32 - s));
}

std::uint32_t load_be32(const std::uint8_t* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

// One round: a new word enters at a, the others move down one place.
inline void step(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d,
                 std::uint32_t& e, std::uint32_t f, std::uint32_t k, std::uint32_t wt) noexcept {
  const std::uint32_t next = rotl(a, 5) + f + e + k + wt;
  e = d;
  d = c;
  c = rotl(b, 30);
  b = a;
  a = next;
}

void compress(std::array<std::uint32_t, 5>& h, const std::uint8_t* block) noexcept {
  std::uint32_t w[16];
#pragma GCC unroll 16
  for (int t = 0; t < 16; ++t) {
    w[t] = load_be32(block + 4 * t);
  }
  // Message schedule W[t] for t >= 16, in a rolling window of 16 words.
  auto schedule = [&w](int t) noexcept {
    if (t >= 16) {
      w[t & 15] = rotl(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^ w[(t - 14) & 15] ^ w[t & 15], 1);
    }
    return w[t & 15];
  };
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
#pragma GCC unroll 20
  for (int t = 0; t < 20; ++t) {
    step(a, b, c, d, e, (b & c) | (~b & d), 0x5A827999U, schedule(t));
  }
#pragma GCC unroll 20
  for (int t = 20; t < 40; ++t) {
    step(a, b, c, d, e, b ^ c ^ d, 0x6ED9EBA1U, schedule(t));
  }
#pragma GCC unroll 20
  for (int t = 40; t < 60; ++t) {
    step(a, b, c, d, e, (b & c) | (b & d) | (c & d), 0x8F1BBCDCU, schedule(t));
  }
#pragma GCC unroll 20
  for (int t = 60; t < 80; ++t) {
    step(a, b, c, d, e, b ^ c ^ d, 0xCA62C1D6U, schedule(t));
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

digest to_digest(const std::array<std::uint32_t, 5>& h) noexcept {
  digest out;
  for (int i = 0; i < 5; ++i) {
    store_be32(out.data() + 4 * i, h[i]);
  }
  return out;
}

// Pads the final bytes of a message (tail, tail_length < 64) whose total
// length is total_length bytes, and compresses the one or two last blocks.
void finish(std::array<std::uint32_t, 5>& h, const std::uint8_t* tail, std::size_t tail_length,
            std::uint64_t total_length) noexcept {
  std::uint8_t block[128];
  const std::size_t blocks = tail_length < 56 ? 1 : 2;
  std::uint8_t* length_field = block + 64 * blocks - 8;
  std::memcpy(block, tail, tail_length);
  block[tail_length] = 0x80;
  std::memset(block + tail_length + 1, 0, static_cast<std::size_t>(length_field - block) - tail_length - 1);
  const std::uint64_t bits = total_length * 8;
  store_be32(length_field, static_cast<std::uint32_t>(bits >> 32));
  store_be32(length_field + 4, static_cast<std::uint32_t>(bits));
  for (std::size_t i = 0; i < blocks; ++i) {
    compress(h, block + 64 * i);
  }
}

}  // namespace

digest sha1(const void* message, std::size_t length) noexcept {
  const auto* bytes = static_cast<const std::uint8_t*>(message);
  std::array<std::uint32_t, 5> h = k_initial;
  std::size_t done = 0;
  for (; length - done >= 64; done += 64) {
    compress(h, bytes + done);
  }
  finish(h, bytes + done, length - done, length);
  return to_digest(h);
}

}  // namespace strata_bench::uts
