// Test support: a runtime configuration with n workers that runs on any
// machine (oversubscription allowed, no pinning), for tests of the scheduler
// rather than of placement.
//
// Its scheduling policy comes from STRATA_POLICY (validated; unset:
// tiered_stealing): ctest runs the tests of tasks, actors and access once
// per policy (strata_add_test's POLICIES, tests/CMakeLists.txt), and a test
// that expects something of one policy asks policy().
#pragma once

#include <strata/runtime/config.hpp>

namespace strata::test {

inline strata::config workers(unsigned n) {
  strata::config c;
  c.workers = n;
  c.oversubscribe = true;
  c.bind = strata::bind_policy::none;
  c.policy = strata::runtime_config::from_env().policy;
  return c;
}

// The policy these tests run under (STRATA_POLICY).
inline strata::policy policy() { return strata::runtime_config::from_env().policy; }
inline bool steals() { return policy() == strata::policy::tiered_stealing; }

}  // namespace strata::test
