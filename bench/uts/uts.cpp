// UTS node expansion, shared by every runtime's version (see uts.hpp).
#include "uts/uts.hpp"

#include <algorithm>
#include <cmath>

namespace strata_bench::uts {
namespace {

constexpr int k_max_children = 100;

void store_be32(std::uint8_t* p, std::uint32_t v) noexcept {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

// u(node) in [0, 1) from the last 31 bits of the digest.
double uniform(const node& n) noexcept {
  const std::uint32_t r = (std::uint32_t{n.id[16]} << 24) | (std::uint32_t{n.id[17]} << 16) |
                          (std::uint32_t{n.id[18]} << 8) | std::uint32_t{n.id[19]};
  return static_cast<double>(r & 0x7fffffffU) / 2147483648.0;
}

}  // namespace

node root(const tree& t) noexcept {
  std::uint8_t message[20] = {};
  store_be32(message + 16, static_cast<std::uint32_t>(t.seed));
  return {sha1(message, sizeof message), 0};
}

node child(const node& parent, int index) noexcept {
  std::uint8_t message[24];
  std::copy(parent.id.begin(), parent.id.end(), message);
  store_be32(message + 20, static_cast<std::uint32_t>(index));
  return {sha1(message, sizeof message), parent.height + 1};
}

int num_children(const tree& t, const node& n) noexcept {
  if (t.kind == tree_kind::binomial) {
    if (n.height == 0) {
      return static_cast<int>(std::floor(t.b0));  // within the root's cap, ceil(b0)
    }
    return uniform(n) < t.q ? std::min(t.m, k_max_children) : 0;
  }
  const double b = n.height < t.depth ? t.b0 : 0.0;
  const double p = 1.0 / (1.0 + b);
  const double k = std::floor(std::log(1.0 - uniform(n)) / std::log(1.0 - p));
  return static_cast<int>(std::min(k, double{k_max_children}));
}

}  // namespace strata_bench::uts
