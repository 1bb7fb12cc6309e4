// External lanes: the submission path of a thread outside the workers.
//
// The problem. A program's main thread that submits a million small tasks
// is the most common way to use a task runtime. Through the node's injector
// (an MPMC queue) each such task paid a heap frame freed on another core,
// two read-modify-writes on runtime-wide counters (the shutdown guard and
// the created count), a CAS into the queue, a CAS out of it, and, because
// the queue hands out one task per pop, a worker that ran dry between two
// pops: about a microsecond per task, against tens of nanoseconds for a
// spawn on a worker.
//
// The design (oneTBB's master slot, OpenMP's primary thread). Each thread
// outside the workers that submits to a runtime gets a lane of its own on
// first use: a work-stealing deque of which it is the owner, a frame pool of
// its own, a single-writer created count and a single-writer "submitting"
// flag. A submission takes a frame from the lane's pool, pushes it on the
// private end of the lane's deque and publishes it at once (a release store:
// the submitter never runs what it pushes), then does the producer's half
// of the parking protocol (parking.cpp, maybe_wake). Workers find lanes
// after their own node's injector and before their steal tiers, and take
// up to half of a lane's tasks at once (one CAS each, the rest kept on their
// own deque, shared again on request), so the submitter and a worker meet
// once per batch rather than once per task. Frames go back to the lane's
// pool in chains, as between workers (frame_pool.hpp).
//
// Shutdown against a lane's submitter is a Dekker pair on the lane's own
// line: the submitter stores submitting = 1, runs a seq_cst fence and reads
// `accepting`; shutdown stores accepting = false (seq_cst) and then waits
// for every lane's submitting to read 0 (seq_cst loads). So a submission
// is either refused before anything was pushed, or counted (created before
// submitting drops to 0, a release store) before shutdown waits for the
// last task.
//
// Lifetime. Lanes belong to the runtime and die with it (their memory is
// the runtime's); a lane and its thread share only a small claim, so
// neither outliving the other leaves a dangling pointer. When a thread
// exits, its claims are marked unheld (release) and a thread that comes
// later takes the lane over (acquire, under lane_mutex), continuing its
// deque and pool as the next owner; when a runtime dies, it marks its
// claims gone and threads drop them on their next lookup. Tasks left in a lane
// whose thread is gone are still stolen. With k_max_lanes lanes held at
// once, further threads submit through the injector as before.
//
// Rejected: one shared MPSC queue for all external threads (the consumer
// side would still take one task per operation, and producers would share a
// line), and a worker slot lent to the submitting thread (under
// engine::owned every slot has its pinned thread).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/deque.hpp>
#include <strata/runtime/ext/frame_pool.hpp>
#include <strata/runtime/ext/worker.hpp>

namespace strata::detail {

// Shared by a lane and the thread holding it.
struct lane_claim {
  // True while a thread holds the lane: release store when it exits, acquire
  // load (under lane_mutex) by the next thread that takes it.
  std::atomic<bool> held{true};
  // Set (release) when the runtime dies: a thread drops the claim on its
  // next lookup (acquire), so claims of dead runtimes do not pile up.
  std::atomic<bool> runtime_gone{false};
};

struct external_lane {
  external_lane(unsigned i, std::uint32_t home) : index(i), deque(1024), thieves(deque.make_stealer()) {
    pool.set_home(home);
  }

  const unsigned index;  // in runtime_core::lanes
  // A worker near the holder when it took the lane (whose package to wake
  // first): written under lane_mutex by take_lane, read by the holder only.
  unsigned near = 0;
  // --- the holding thread's (one at a time; handed over through `held`) ---
  worker_deque<task*> deque;  // everything pushed is published at once
  frame_pool pool;            // home: num_workers + index
  // --- read by other threads ---
  stealer<task*> thieves;  // the workers' handle on `deque`
  alignas(k_destructive_size) counter created;  // single writer: the holder; read by wait_idle
  // Dekker with shutdown (see the top of the file): 1 while a submission
  // is between its check of `accepting` and its push.
  std::atomic<std::uint32_t> submitting{0};
  std::shared_ptr<lane_claim> claim = std::make_shared<lane_claim>();
};

// The calling thread's lane of rt for its submissions (taken on first use),
// or nullptr: no lane free, a runtime that keeps the injector path
// (deterministic_seed), or one whose workers never look at lanes
// (pinned_mpsc, hybrid: submissions go round robin).
external_lane* caller_lane(runtime_core& rt);

// Pushes frame t (from the lane's pool or the heap) on the caller's lane and
// wakes a worker if nobody spins. Throws runtime_error after shutdown began
// (unless `admitted`: the caller holds the shutdown guard), t given back.
void submit_on_lane(runtime_core& rt, external_lane& lane, task* t, bool admitted);

// A worker's take from the lanes: the first task of the first lane with
// shared work, the rest of a batch from it pushed on w's deque. nullptr when
// every lane is empty.
task* take_from_lanes(worker& w) noexcept;

// The frame pool of `home`: a worker's (home < num_workers) or a lane's.
frame_pool& pool_of_home(runtime_core& rt, std::uint32_t home) noexcept;

// wait_idle's created count of every lane (acquire loads).
std::uint64_t lanes_created(const runtime_core& rt) noexcept;

// Shutdown: waits until no lane's submitter is inside its check (after
// accepting was cleared; seq_cst loads).
void wait_lane_submitters(const runtime_core& rt) noexcept;

}  // namespace strata::detail
