// Scheduling policies (policy.cpp tells what each one changes). Internal to
// the core.
#pragma once

#include <cstdint>

#include <strata/runtime/ext/core.hpp>

namespace strata::detail {

// Sets rt.steals and rt.shares from rt.settings.policy (before any worker runs).
void apply_policy(runtime_core& rt) noexcept;
// A worker's spill_at under rt's policy: hybrid_bound under hybrid, else no bound.
std::int64_t spill_bound(const runtime_core& rt) noexcept;
// A submission from a thread outside the workers under pinned_mpsc or
// hybrid: to the next worker round robin (hybrid: to the spill queue when
// that worker's inbox holds hybrid_bound tasks).
void submit_home(runtime_core& rt, task* t, bool admitted);
// Pushes a task from outside on the injector of NUMA node `node` (counted,
// guarded against shutdown unless admitted) and wakes a worker near
// `near` if nobody searches (submit.cpp).
void submit_to_injector(runtime_core& rt, task* t, std::size_t node, unsigned near, bool admitted);

}  // namespace strata::detail
