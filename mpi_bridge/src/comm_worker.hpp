// progress=worker: one worker of the runtime, the comm worker, is the
// bridge's MPI owner. Its passes are a work source of the core
// (work_source.hpp); no thread of the bridge's own.
//
// Why. With a progress thread, a message for an actor or a task crosses two
// threads on the receiving rank: the progress thread receives it and pushes
// a frame into a worker's inbox, and a parked worker pays a futex wake-up
// (20-30 µs on a VM) before it runs. On the comm worker the pass delivers
// into its own inbox and the worker runs the frame next, awake; its answer
// leaves at the worker's next poll. It also spares a rank a thread that
// competes with the workers for the cores (DESIGN.md: "a pinned comm worker
// (a work source of the core) or a dedicated progress thread").
//
// The source (comm_source), registered on every worker at the same index
// (add_source), is inert except on the comm worker:
// - poll(w, budget): one pass of the bridge (bridge::worker_pass), a
//   try_lock of the MPI lock, so a helper's pass or the application's
//   serialized() call never blocks the worker: it runs tasks meanwhile.
//   When the worker's deque is empty (a chain budget, > 1: find_work.hpp)
//   the worker went idle as a producer, so the pass first seals what it
//   posted itself (an actor's answer): "flushed when the sender goes idle".
//   The worker loop polls between tasks: every k_injector_period tasks
//   while it is busy, at once when it is idle.
// - ready(w): whether a pass has work: for some passes after one that
//   brought traffic (the hot window: a receive, a buffer of this rank's own
//   items run, a wave, or a send while a reply is awaited: the reply or the
//   next message is usually a few µs away, and incoming MPI traffic cannot
//   wake anybody: Open MPI has no asynchronous progress; counted in passes,
//   so that a worker preempted inside it still finds it open), or while a sealed buffer waits to be sent, or
//   something was posted since the last pass, or when the last pass is
//   older than the pass interval (an awake worker that spins searching for
//   tasks asks only ready(), never polls). So an idle rank's comm worker
//   spins about the hot window, then parks. An idle pass after a run of
//   empty ones yields the core. A producer's open buffer, or a send in
//   flight, is not work by itself: while a thread streams posts, it seals
//   its buffers and sends them itself (kick_sends), and a comm worker
//   spinning beside it took a third of the two cores from it and from the
//   receiving rank (the 8 B rate went from 25 to 40 M/s without it).
// - The idle wait: a timed sleep on the worker's own parking word, 50 µs
//   doubling to 1 ms while nothing comes, so a parked comm worker still
//   receives within a millisecond (as the progress thread does); 50 µs
//   while a reply is awaited on this rank; 20 µs while a send is in flight
//   or a producer's buffer is open (the send needs MPI calls to complete,
//   the buffer is due within flush_delay). A producer that needs the owner
//   (it queued a buffer, or opened one: Opened buffers below) calls
//   notify_worker, which wakes the parked worker through that same word;
//   wake_idle has nothing more to do.
//
// Helpers. A thread outside the workers that waits for a reply (get())
// makes passes itself for up to 200 µs (help_wait), so the reply is taken
// where it is awaited. Meanwhile (help_begin .. help_end) ready() is false
// and the idle wait is a millisecond: a comm worker spinning beside the
// helper only fought it for the MPI lock and took a core from it or from
// the peer rank (3.3 -> 2.6 µs for a 0 B submit_at round trip, and runs of
// 8-22 µs gone), and one woken every 100 µs still cost half a microsecond
// a round trip (each wake-up took the helper's core for 15-45 µs). The
// helper that leaves wakes the worker only when something needs it (its
// own reply late, another awaited, a send in flight, an open buffer), and
// its next post goes at once on an idle link, so that its next request
// does not open a buffer that a sleeping worker would have to seal.
//
// Opened buffers. A producer that opens a buffer needs it sealed within
// flush_delay, but a parked comm worker whose wait ends by then will look
// on its own: nudge_open wakes it only when its wait ends later. The
// worker publishes that end (m_wait_until, seq_cst) before it reads the
// hints that choose its wait; the producer stores has_open, fences, then
// reads `sleeping` and the end. Either the producer reads this wait's end
// (and wakes a long one), or the worker's reads see has_open and it waits
// the short busy time (a stale end read by the producer is then harmless).
// A wake-up per request (a futex call on the requester's path and a third
// thread on two cores) was a microsecond of every round trip.
//
// No lost wake-up: producers store their hint (has_open, has_sealed,
// pending bytes), then notify_worker (seq_cst fence, load of `sleeping`);
// the parker stores `sleeping` (seq_cst), and its re-check in ready() and
// the choice of its timeout read the hints with seq_cst loads. One of the
// two sees the other (parking.cpp's protocol): the producer wakes the
// worker, or the worker does not park (a sealed buffer) or parks for the
// short wait (an open one, due only after flush_delay anyway).
//
// Life. The source is made once per runtime (a subsystem: the core never
// removes sources), when its first session under progress=worker starts,
// and serves one bridge at a time: attach() at the session's start,
// detach() at its end, which waits for a pass in progress (m_use) so that
// no pass touches a bridge being destroyed. The comm worker is fixed for
// the runtime's life by that first session. A worker whose idle wait an
// event loop supplies cannot be the comm worker (at most one idle wait per
// worker): usage_error.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>

#include <strata/runtime/ext/work_source.hpp>

namespace strata::detail {
struct runtime_core;
struct worker;
}  // namespace strata::detail

namespace strata::mpi::detail {

class bridge;

class comm_source final : public strata::detail::work_source {
 public:
  explicit comm_source(bool active) noexcept : m_active(active) {}
  bool ready(strata::detail::worker& w) noexcept override;
  std::size_t poll(strata::detail::worker& w, std::size_t budget) noexcept override;
  bool supplies_idle_wait() const noexcept override { return m_active; }
  void idle_wait(strata::detail::worker& w) noexcept override;
  // The waker's futex_wake of the worker's parking word ends the wait.
  void wake_idle() noexcept override {}

  // The session's bridge starts or stops being served (see Life).
  void attach(bridge* b) noexcept;
  void detach() noexcept;

 private:
  const bool m_active;
  // Written by attach/detach under m_use; read by the comm worker under it.
  std::atomic<bridge*> m_bridge{nullptr};
  std::mutex m_use;
};

// The comm worker of rt for a session: registers the sources on first use
// (worker `index`), checks that a later session names the same worker, and
// attaches b. Returns the comm worker's source. Throws usage_error.
comm_source& attach_comm_worker(strata::detail::runtime_core& rt, unsigned index, bridge* b);

}  // namespace strata::mpi::detail
