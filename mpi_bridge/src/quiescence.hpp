// Distributed termination: the four-counter protocol over waves of
// non-blocking allreduces (YGM's, extended to logical items and an epoch).
//
// Counters, per rank, monotone:
//   sent  items handed to the bridge for any rank (tasks, replies), counted
//         when posted, so before the item can be processed anywhere;
//   done  items whose processing finished: a task once it ran and posted its
//         reply and everything it sent, a reply once its future is filled.
// A call of an inline function to the caller's own rank made inside a pass
// is neither: it runs inside the post, so it is part of the item the pass is
// running, already counted sent and not yet done (bridge::post_local). Made
// anywhere else, it is sent and done like any item (bridge.hpp, Local items).
// A wave is one MPI_Iallreduce(SUM) of (sent, done) read when the rank
// joins it. The waiter returns when two consecutive waves give equal sums
// and sent == done.
//
// Why that is a real snapshot: a rank reads wave k+1 only after wave k
// completed on it, and wave k completes on any rank only after every rank
// joined it, so T = max over ranks of the wave-k read times precedes every
// rank's wave-(k+1) read. Equal sums mean no counter changed on any rank
// between its two reads (they only grow), so at time T every rank's
// counters were the values summed, and sent == done at T means every item
// ever sent had finished: nothing in transit, nothing running, and nothing
// can be started again except by a thread outside the bridge. An item that
// is still in a coalescing buffer is sent but not done, so the owner
// flushes every partial buffer before it joins a wave.
//
// The epoch (quiescence calls completed) rides in every buffer header,
// stamped Lamport-style (the sender's epoch, or the highest it has received
// if that is later: a rank still testing its last wave may already run
// items a faster rank sent after returning). A buffer with items and an
// older epoch than its receiver's would have been in flight across a
// quiescence, which the protocol excludes; the bridge counts such buffers
// (late_epoch) as a standing check of this argument, and the tests assert
// it stays 0.
// tools/spin/quiescence.pml models the protocol and a mutant of it.
#pragma once

#include <cstdint>

namespace strata::mpi::detail {

struct wave_sums {
  std::uint64_t sent = 0;
  std::uint64_t done = 0;
  friend bool operator==(const wave_sums&, const wave_sums&) = default;
};

// The decision part of the protocol (the MPI part is the bridge's).
class quiescence_detector {
 public:
  // A new wait_quiescent: forgets the previous wave.
  void begin() noexcept {
    m_have_previous = false;
    m_rounds_this_call = 0;
  }
  // A wave completed with these global sums: true when quiescent.
  bool on_wave(const wave_sums& global) noexcept {
    ++m_rounds;
    ++m_rounds_this_call;
    const bool quiet = m_have_previous && global == m_previous && global.sent == global.done;
    m_previous = global;
    m_have_previous = true;
    return quiet;
  }
  std::uint64_t rounds() const noexcept { return m_rounds; }
  std::uint64_t rounds_this_call() const noexcept { return m_rounds_this_call; }

 private:
  wave_sums m_previous;
  bool m_have_previous = false;
  std::uint64_t m_rounds = 0;
  std::uint64_t m_rounds_this_call = 0;
};

}  // namespace strata::mpi::detail
