// Internal: entry points of worker_loop.cpp used by runtime.cpp.
#pragma once

#include <strata/runtime/ext/runtime_core.hpp>

namespace strata::detail {

void set_current_worker(worker* w) noexcept;
void worker_loop(worker& w);
void wake_one(runtime_core& rt, unsigned near) noexcept;
void wake_worker(runtime_core& rt, unsigned index) noexcept;
void wake_all(runtime_core& rt) noexcept;
// After publishing shared work: wake a parked worker if nobody spins.
void maybe_wake(runtime_core& rt, unsigned near) noexcept;

}  // namespace strata::detail
