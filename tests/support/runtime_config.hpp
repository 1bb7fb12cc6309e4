// Test support: a runtime configuration with n workers that runs on any
// machine (oversubscription allowed, no pinning), for tests of the scheduler
// rather than of placement.
#pragma once

#include <strata/runtime/config.hpp>

namespace strata::test {

inline strata::config workers(unsigned n) {
  strata::config c;
  c.workers = n;
  c.oversubscribe = true;
  c.bind = strata::bind_policy::none;
  return c;
}

}  // namespace strata::test
