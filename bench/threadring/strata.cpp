// threadring on strata actors, in two placements: every actor sticky on
// worker 0 (same-worker: each pass is a mailbox append on that worker), or
// actor i sticky on worker i mod P (spread: with 2 workers each pass is an
// inbox push to the other worker). Wired to successors once per
// configuration. A run is one token sent by the harness thread to actor 0;
// the token carries a pointer to the run's outcome (16 bytes in all, inline
// in the message frame), each actor counts its passes in its own slot, and
// the actor that gets the count 0 releases the semaphore the harness thread
// waits on.
#include <semaphore>
#include <vector>

#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "threadring/threadring.hpp"

namespace strata_bench::threadring {
namespace {

// One run: the actors write the outcome, the last one releases done; the
// harness thread acquires done, then reads the outcome.
struct run_state {
  outcome seen;
  std::binary_semaphore done{0};
};

struct token {
  std::uint32_t count;
  run_state* run;
};

struct ring_actor : strata::actor<ring_actor> {
  std::uint32_t index;
  strata::actor_ref<ring_actor> next;

  explicit ring_actor(std::uint32_t i) : index(i) {}
  void receive(strata::actor_context&, const strata::actor_ref<ring_actor>& n) { next = n; }
  void receive(strata::actor_context&, const token& t) {
    if (t.count == 0) {
      t.run->seen.last = index;
      t.run->done.release();  // release: publishes every slot (pairs with acquire in the repetition)
      return;
    }
    ++t.run->seen.passes[index].n;
    next.send(token{t.count - 1, t.run});
  }
};

// workers: actor i goes to worker i mod workers.
repetition prepare(unsigned threads, unsigned workers) {
  auto rt = make_strata_runtime(threads);
  std::vector<strata::actor_ref<ring_actor>> ring;
  for (std::uint32_t i = 0; i < k_actors; ++i) {
    ring.push_back(rt->spawn_actor<ring_actor>(strata::affinity::sticky, strata::worker_id{i % workers}, i));
  }
  for (std::uint32_t i = 0; i < k_actors; ++i) {
    ring[i].send(ring[(i + 1) % k_actors]);
  }
  rt->wait_idle();
  return [rt, first = ring[0]] {
    run_state run;
    first.send(token{opaque(k_passes), &run});
    run.done.acquire();  // acquire: pairs with the last actor's release
    return check(run.seen);
  };
}

}  // namespace

repetition prepare_strata_same_worker(unsigned threads) { return prepare(threads, 1); }
repetition prepare_strata_spread(unsigned threads) { return prepare(threads, threads); }

}  // namespace strata_bench::threadring
