// counting on CAF 0.17: the producer an event-based actor, the counter a
// stateful one. The harness thread's scoped actor sends the producer a start
// request; in that one handler the producer sends the 1,000,000 increments,
// then requests the count from the counter and delivers the answer to the
// start request when it comes.
#include "common/caf_session.hpp"
#include "counting/counting.hpp"

namespace strata_bench::counting {
namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using increment_atom = caf::atom_constant<caf::atom("increment")>;
using retrieve_atom = caf::atom_constant<caf::atom("retrieve")>;

struct counter_state {
  std::uint64_t count = 0;
};

caf::behavior counter_actor(caf::stateful_actor<counter_state>* self) {
  return {
      [self](increment_atom) { ++self->state.count; },
      [self](retrieve_atom) {
        const std::uint64_t count = self->state.count;
        self->state.count = 0;
        return count;
      },
  };
}

caf::behavior producer_actor(caf::event_based_actor* self, const caf::actor& counter) {
  return {
      [self, counter](start_atom, std::uint64_t messages) {
        for (std::uint64_t i = 0; i < messages; ++i) {
          self->send(counter, increment_atom::value);
        }
        caf::response_promise reply = self->make_response_promise();
        self->request(counter, caf::infinite, retrieve_atom::value).then([reply](std::uint64_t count) mutable {
          reply.deliver(count);
        });
      },
  };
}

struct session {
  explicit session(unsigned threads) : rt(threads) {
    const caf::actor counter = rt.spawn(counter_actor);
    producer = rt.spawn(producer_actor, counter);
  }
  caf_session rt;
  caf::actor producer;
};

}  // namespace

repetition prepare_caf(unsigned threads) {
  auto s = std::make_shared<session>(threads);
  return [s] {
    std::uint64_t count = 0;
    std::string error;
    s->rt.self()
        ->request(s->producer, caf::infinite, start_atom::value, opaque(k_messages))
        .receive([&](std::uint64_t c) { count = c; }, [&](caf::error& e) { error = s->rt.render(e); });
    if (!error.empty()) {
      return verdict{false, "caf: " + error};
    }
    return check(count);
  };
}

}  // namespace strata_bench::counting
