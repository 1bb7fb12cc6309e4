// size_from_env: a problem size that quick tests may shrink through the
// environment (STRATA_BENCH_STREAM_N, STRATA_BENCH_JACOBI_N).
//
// Unset or empty: the default. Anything else must be a whole number in
// [lo, hi], else std::invalid_argument names the variable, its value and the
// accepted range (the record then says "FAIL: setup: ...").
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace strata_bench {

inline std::size_t size_from_env(const char* var, std::size_t fallback, std::size_t lo, std::size_t hi) {
  const char* text = std::getenv(var);
  if (text == nullptr || *text == '\0') {
    return fallback;
  }
  const std::string_view s(text);
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < lo || v > hi) {
    throw std::invalid_argument(std::string(var) + "='" + std::string(s) + "': accepted: a whole number from " +
                                std::to_string(lo) + " to " + std::to_string(hi) + " (unset: " +
                                std::to_string(fallback) + ")");
  }
  return v;
}

// The size for a record's params: the value, or "?" when the variable is bad
// (prepare then fails with the message above).
inline std::string size_param(const char* var, std::size_t fallback, std::size_t lo, std::size_t hi) {
  try {
    return std::to_string(size_from_env(var, fallback, lo, hi));
  } catch (const std::invalid_argument&) {
    return "?";
  }
}

}  // namespace strata_bench
