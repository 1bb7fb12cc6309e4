#include "uts/sha1.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace strata_bench::uts {
namespace {

std::string hex(const digest& d) {
  std::string s;
  for (std::uint8_t b : d) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

// FIPS 180-2 appendix A and the padding edge cases (55, 56 and 64 bytes).
struct vector {
  const char* name;
  std::string message;
  const char* digest;
};

class Sha1Vectors : public testing::TestWithParam<vector> {};

TEST_P(Sha1Vectors, MatchesKnownDigest) {
  const vector& v = GetParam();
  EXPECT_EQ(hex(sha1(v.message.data(), v.message.size())), v.digest);
}

INSTANTIATE_TEST_SUITE_P(
    Uts, Sha1Vectors,
    testing::Values(
        vector{"empty", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
        vector{"abc", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
        vector{"two_blocks", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
               "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
        vector{"million_a", std::string(1000000, 'a'), "34aa973cd4c4daa4f61eeb2bdbad27316534016f"},
        vector{"bytes_55", std::string(55, 'x'), "cef734ba81a024479e09eb5a75b6ddae62e6abf1"},
        vector{"bytes_56", std::string(56, 'x'), "901305367c259952f4e7af8323f480d59f81335b"},
        vector{"bytes_64", std::string(64, 'x'), "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163"}),
    [](const testing::TestParamInfo<vector>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace strata_bench::uts
