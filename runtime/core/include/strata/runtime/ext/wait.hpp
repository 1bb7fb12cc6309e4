// Waiting without blocking a worker, and waiting outside the workers in
// inline mode (src/wait.cpp).
//
// A wait on a worker (task_group::wait, future::get, dataflow_graph::wait)
// runs other work while its condition does not hold (help_until): a worker
// never blocks while work exists. A thread outside the workers blocks
// (sync.hpp, or a future's own futex); with engine::external and no thread
// hosting a worker, nobody else runs the workers, so it ticks them itself
// (drive_inline).
#pragma once

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/sync.hpp>

namespace strata::detail {

// Helps (runs other tasks, polls the work sources; in a tick pass, runs the
// other workers too) until pred(ctx) holds.
void help_until(worker& w, bool (*pred)(const void*), const void* ctx);

// engine::external with no thread hosting a worker: runs one pass of every
// worker on the calling thread (outside the workers) and returns true; false
// otherwise (the caller blocks as usual).
bool drive_inline(runtime_core& rt);

// Blocks a thread outside the workers until done() holds (wait_external),
// ticking on it meanwhile while the runtime runs inline (drive_inline).
template <class Done>
void wait_outside_workers(runtime_core& rt, Done&& done) {
  while (rt.external_engine && !done()) {
    if (!drive_inline(rt)) break;
  }
  wait_external(rt.ext, done);
}

}  // namespace strata::detail
