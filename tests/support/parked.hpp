// Test support: whether a worker is parked, for tests that must hand work
// to a sleeping worker (a handshake, not a sleep that hopes it parked).
#pragma once

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/runtime.hpp>

namespace strata::test {

// True when worker i committed to sleep and has not woken since: a worker
// counts a park just before it sleeps and a wake-up just after (parking.cpp),
// one each per sleep. parks is read first: a wake-up count below it, read
// later, was read while the worker was between the two.
inline bool parked(strata::runtime& rt, unsigned i) {
  const auto& c = rt.core().workers[i]->counters;
  const auto parks = c.parks.get();  // acquire loads (counter::get)
  return c.wakeups.get() < parks;
}

inline bool all_parked(strata::runtime& rt) {
  for (unsigned i = 0; i < rt.num_workers(); ++i) {
    if (!parked(rt, i)) return false;
  }
  return true;
}

}  // namespace strata::test
