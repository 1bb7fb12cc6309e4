// Test support: iteration counts shrink under sanitizers (they run 5-20x
// slower); every concurrent test keeps its exact-count assertions.
#pragma once

#include <cstddef>

#include <strata/config.hpp>

namespace strata::test {

#if STRATA_TSAN || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr std::size_t k_scale_div = 20;
#else
inline constexpr std::size_t k_scale_div = 1;
#endif

constexpr std::size_t scaled(std::size_t n) { return n / k_scale_div > 0 ? n / k_scale_div : 1; }

}  // namespace strata::test
