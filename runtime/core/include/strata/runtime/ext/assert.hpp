// STRATA_ASSERT(cond, what): checks an invariant of the runtime's own
// protocols (deque indices, idle words, frame ownership). It guards against
// bugs in strata, never against bad user input (that is a usage_error or a
// config_error). On in dev and sanitizer builds (STRATA_ASSERTIONS in the
// generated strata/config.hpp), compiled out in release builds: then `cond`
// is not evaluated and costs nothing.
#pragma once

#include <strata/config.hpp>

namespace strata::detail {

// Prints the failed invariant with its place and aborts: state that broke a
// stated invariant cannot be trusted to unwind.
[[noreturn]] void assert_failed(const char* cond, const char* what, const char* file, int line) noexcept;

}  // namespace strata::detail

#if STRATA_ASSERTIONS
#define STRATA_ASSERT(cond, what) \
  ((cond) ? static_cast<void>(0) : ::strata::detail::assert_failed(#cond, what, __FILE__, __LINE__))
#else
#define STRATA_ASSERT(cond, what) static_cast<void>(sizeof(static_cast<bool>(cond)))
#endif
