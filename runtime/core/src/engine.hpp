// The engine seam (engine.cpp) and the worker loop it hosts (worker_loop.cpp).
// Internal to the core.
#pragma once

#include <strata/runtime/ext/core.hpp>

namespace strata::detail {

inline void set_current_worker(worker* w) noexcept { t_current_worker = w; }

// Runs w's loop until the runtime stops (worker_loop.cpp).
void worker_loop(worker& w);

// One pass of every worker on the calling thread; the caller holds
// rt.engine_mutex and no worker is hosted. Returns the units of work run.
std::size_t tick_pass(runtime_core& rt) noexcept;

// Called by help_until on worker w: when this thread is running a tick pass
// of w's runtime, runs one bounded pass of the other workers (they have no
// thread of their own) and returns true if it ran something.
bool tick_others(worker& w) noexcept;

}  // namespace strata::detail
