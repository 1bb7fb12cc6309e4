// counting on strata actors: the producer sticky on worker 0, the counter
// sticky on worker 1 (both on worker 0 with 1 thread). A run is one start
// message from the harness thread; in that one turn the producer sends the
// 1,000,000 increments and a retrieve carrying its own address, the counter
// answers with a total message, and the producer puts the total in the
// run's state and releases the semaphore the harness thread waits on.
//
// With 2 workers every increment is one push into worker 1's inbox (a
// frame from worker 0's pool, freed on worker 1); with 1, a push into the
// counter's mailbox, all 10^6 frames queued before the counter's first turn.
#include <semaphore>

#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "counting/counting.hpp"

namespace strata_bench::counting {
namespace {

struct producer_actor;

// One run: the producer writes the count, then releases done; the harness
// thread acquires done, then reads the count.
struct run_state {
  std::uint64_t count = 0;
  std::binary_semaphore done{0};
};

struct start {
  run_state* run;
  std::uint64_t messages;
};
struct increment {};
struct retrieve {
  strata::actor_ref<producer_actor> reply_to;
};
struct total {
  std::uint64_t count;
};

struct counter_actor : strata::actor<counter_actor> {
  std::uint64_t count = 0;
  void receive(strata::actor_context&, const increment&) { ++count; }
  void receive(strata::actor_context&, const retrieve& r);
};

struct producer_actor : strata::actor<producer_actor> {
  strata::actor_ref<counter_actor> counter;
  run_state* run = nullptr;

  explicit producer_actor(strata::actor_ref<counter_actor> c) : counter(c) {}
  void receive(strata::actor_context& ctx, const start& s) {
    run = s.run;
    for (std::uint64_t i = 0; i < s.messages; ++i) {
      counter.send(increment{});
    }
    counter.send(retrieve{ctx.self_ref<producer_actor>()});
  }
  void receive(strata::actor_context&, const total& t) {
    run->count = t.count;
    run->done.release();  // release: publishes run->count (pairs with acquire in the repetition)
  }
};

void counter_actor::receive(strata::actor_context&, const retrieve& r) {
  r.reply_to.send(total{count});
  count = 0;
}

}  // namespace

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  const strata::worker_id counter_worker{threads > 1 ? 1U : 0U};
  auto counter = rt->spawn_actor<counter_actor>(strata::affinity::sticky, counter_worker);
  auto producer = rt->spawn_actor<producer_actor>(strata::affinity::sticky, strata::worker_id{0}, counter);
  rt->wait_idle();
  return [rt, producer] {
    run_state run;
    producer.send(start{&run, opaque(k_messages)});
    run.done.acquire();  // acquire: pairs with the producer's release
    return check(run.count);
  };
}

}  // namespace strata_bench::counting
