// threadring on CAF 0.17: 100 stateful event-based actors, wired to their
// successors once per configuration. A run: the harness thread's scoped
// actor sends (token, 100,000) to actor 0 and waits for (done, index) from
// the actor that gets the count 0. CAF messages carry no raw pointers, so
// each actor was spawned with a pointer to its slot of the configuration's
// outcome (reset before each run) instead.
#include <vector>

#include "common/caf_session.hpp"
#include "threadring/threadring.hpp"

namespace strata_bench::threadring {
namespace {

using next_atom = caf::atom_constant<caf::atom("next")>;
using token_atom = caf::atom_constant<caf::atom("token")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

struct ring_state {
  caf::actor next;
};

caf::behavior ring_actor(caf::stateful_actor<ring_state>* self, std::uint32_t index, std::uint32_t* passes,
                         const caf::actor& report_to) {
  return {
      [self](next_atom, const caf::actor& n) { self->state.next = n; },
      [self, index, passes, report_to](token_atom, std::uint32_t count) {
        if (count == 0) {
          self->send(report_to, done_atom::value, index);
          return;
        }
        ++*passes;
        self->send(self->state.next, token_atom::value, count - 1);
      },
  };
}

struct session {
  explicit session(unsigned threads) : rt(threads) {
    for (std::uint32_t i = 0; i < k_actors; ++i) {
      ring.push_back(rt.spawn(ring_actor, i, &seen.passes[i].n, rt.self_handle()));
    }
    for (std::uint32_t i = 0; i < k_actors; ++i) {
      rt.self()->send(ring[i], next_atom::value, ring[(i + 1) % k_actors]);
    }
  }
  outcome seen;  // the slots the actors count in (declared first: outlives them); last: from done
  caf_session rt;
  std::vector<caf::actor> ring;
};

}  // namespace

repetition prepare_caf(unsigned threads) {
  auto s = std::make_shared<session>(threads);
  return [s] {
    s->seen = {};
    std::string error;
    s->rt.self()->send(s->ring[0], token_atom::value, opaque(k_passes));
    s->rt.self()->receive([&](done_atom, std::uint32_t last) { s->seen.last = last; },
                          [&](caf::error& e) { error = s->rt.render(e); });
    if (!error.empty()) {
      return verdict{false, "caf: " + error};
    }
    return check(s->seen);
  };
}

}  // namespace strata_bench::threadring
