// Submission for modules built on the core (src/submit.cpp). The public
// runtime::spawn/submit/submit_on and the spawn fast path (spawn.hpp) use
// these too.
//
// Shutdown against submitters is a Dekker pair: a submitter from outside
// the workers raises runtime_core::active_submits, then reads `accepting`;
// shutdown clears `accepting`, then waits until active_submits is 0 (all
// seq_cst). So a submission either is refused (runtime_error, its frame
// freed) or is counted before shutdown waits for the last task.
#pragma once

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/task.hpp>

namespace strata::detail {

// A frame for a task that the calling thread, outside rt's workers, will
// submit with submit_external: from the pool of the thread's lane
// (src/lanes.hpp), or from the heap (home = k_no_home).
task* external_frame(runtime_core& rt);
// A frame for a routed frame (an actor message) that the calling thread,
// outside rt's workers, sends to a worker's inbox: from its lane's pool, as
// external_frame but under every policy except deterministic_seed (a main
// thread's sends and the MPI bridge's deliveries then reuse frames the
// workers hand back, instead of a malloc here and a free on the worker per
// message), without reserving room on the lane's deque (the frame never
// goes there). Given back, unsent, with discard_external_frame.
task* external_routed_frame(runtime_core& rt);
// Gives back a frame from external_frame or external_routed_frame that was
// never submitted or sent (its callable already destroyed or never built),
// on the thread that took it.
void discard_external_frame(runtime_core& rt, task* t) noexcept;

// Hands a task created outside the runtime's workers to the calling
// thread's lane (or, with none, to the injector of the caller's NUMA node)
// and wakes a worker if nobody spins. From a worker of
// rt: onto its own deque. Throws runtime_error after shutdown began.
void submit_external(runtime_core& rt, task* t, bool admitted = false);
// Hands a task (or a routed frame) to one worker's inbox; it runs there.
void submit_to_worker(runtime_core& rt, unsigned worker, task* t, bool admitted = false);
// A thread outside the workers that will submit several frames as one
// operation: admitted once (runtime_error after shutdown began), and
// shutdown waits until it ends. Its submissions pass admitted = true.
void admit_external(runtime_core& rt);
void end_external(runtime_core& rt) noexcept;

}  // namespace strata::detail
