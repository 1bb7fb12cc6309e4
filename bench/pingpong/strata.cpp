// pingpong on strata actors: ping and pong sticky on worker 0 (same worker:
// each send is a push into the other actor's mailbox, worker-private), or
// ping on worker 0 and pong on worker 1 (cross worker: each send is a push
// into the other worker's inbox, and a futex wake when it had gone to
// sleep). The actors live for the whole configuration; a run is one start
// message from the harness thread, which then waits on a semaphore that
// ping releases after the last answer.
#include <semaphore>

#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "pingpong/pingpong.hpp"

namespace strata_bench::pingpong {
namespace {

struct ping_actor;

// One run: ping writes the outcome, then releases done; the harness thread
// acquires done, then reads the outcome.
struct run_state {
  outcome seen;
  std::binary_semaphore done{0};
};

struct start {
  run_state* run;
  std::uint32_t trips;
};
struct ping {
  std::uint32_t k;
};
struct pong {
  std::uint32_t k;
};

struct pong_actor : strata::actor<pong_actor> {
  strata::actor_ref<ping_actor> back;
  void receive(strata::actor_context&, const strata::actor_ref<ping_actor>& p) { back = p; }
  void receive(strata::actor_context&, const ping& m);
};

struct ping_actor : strata::actor<ping_actor> {
  strata::actor_ref<pong_actor> peer;
  run_state* run = nullptr;
  std::uint32_t trips = 0;
  std::uint32_t sent = 0;
  outcome seen;

  explicit ping_actor(strata::actor_ref<pong_actor> p) : peer(p) {}
  void receive(strata::actor_context&, const start& s) {
    run = s.run;
    trips = s.trips;
    seen = {};
    sent = 1;
    peer.send(ping{sent});
  }
  void receive(strata::actor_context&, const pong& m) {
    ++seen.answers;
    if (m.k != sent) {
      ++seen.out_of_step;
    }
    if (sent < trips) {
      peer.send(ping{++sent});
      return;
    }
    run->seen = seen;
    run->done.release();  // release: publishes run->seen (pairs with acquire in the repetition)
  }
};

void pong_actor::receive(strata::actor_context&, const ping& m) { back.send(pong{m.k}); }

repetition prepare(unsigned threads, unsigned pong_worker) {
  auto rt = make_strata_runtime(threads);
  auto pong_ref = rt->spawn_actor<pong_actor>(strata::affinity::sticky, strata::worker_id{pong_worker});
  auto ping_ref = rt->spawn_actor<ping_actor>(strata::affinity::sticky, strata::worker_id{0}, pong_ref);
  pong_ref.send(ping_ref);
  rt->wait_idle();
  return [rt, ping_ref] {
    run_state run;
    ping_ref.send(start{&run, opaque(k_round_trips)});
    run.done.acquire();  // acquire: pairs with ping's release
    return check(run.seen);
  };
}

}  // namespace

repetition prepare_strata_same_worker(unsigned threads) { return prepare(threads, 0); }
// Worker 1 does not exist with 1 thread: spawn_actor throws usage_error, a
// setup failure (the harness does not run this variant below 2 threads).
repetition prepare_strata_cross_worker(unsigned threads) { return prepare(threads, 1); }

}  // namespace strata_bench::pingpong
