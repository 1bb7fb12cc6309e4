// pingpong on CAF 0.17: ping a stateful event-based actor, pong a stateless
// one that answers by returning its reply (CAF sends it to the sender). The
// harness thread's scoped actor sends ping a start request; ping keeps the
// response promise and delivers (answers, out of step) after the last
// answer. CAF's scheduler decides where each actor runs (a woken actor goes
// to the queue of the thread that sent to it, others steal), so there is
// one record, not a same-worker and a cross-worker one.
#include "common/caf_session.hpp"
#include "pingpong/pingpong.hpp"

namespace strata_bench::pingpong {
namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;

caf::behavior pong_actor(caf::event_based_actor* /*self*/) {
  return {[](ping_atom, std::uint32_t k) { return caf::make_message(pong_atom::value, k); }};
}

struct ping_state {
  caf::response_promise reply;
  std::uint32_t trips = 0;
  std::uint32_t sent = 0;
  outcome seen;
};

caf::behavior ping_actor(caf::stateful_actor<ping_state>* self, const caf::actor& peer) {
  return {
      [self, peer](start_atom, std::uint32_t trips) {
        ping_state& s = self->state;
        s.reply = self->make_response_promise();
        s.trips = trips;
        s.seen = {};
        s.sent = 1;
        self->send(peer, ping_atom::value, s.sent);
      },
      [self, peer](pong_atom, std::uint32_t k) {
        ping_state& s = self->state;
        ++s.seen.answers;
        if (k != s.sent) {
          ++s.seen.out_of_step;
        }
        if (s.sent < s.trips) {
          self->send(peer, ping_atom::value, ++s.sent);
          return;
        }
        s.reply.deliver(s.seen.answers, s.seen.out_of_step);
      },
  };
}

struct session {
  explicit session(unsigned threads) : rt(threads) {
    const caf::actor pong = rt.spawn(pong_actor);
    ping = rt.spawn(ping_actor, pong);
  }
  caf_session rt;
  caf::actor ping;
};

}  // namespace

repetition prepare_caf(unsigned threads) {
  auto s = std::make_shared<session>(threads);
  return [s] {
    outcome seen;
    std::string error;
    s->rt.self()
        ->request(s->ping, caf::infinite, start_atom::value, opaque(k_round_trips))
        .receive([&](std::uint32_t answers, std::uint32_t out_of_step) { seen = {answers, out_of_step}; },
                 [&](caf::error& e) { error = s->rt.render(e); });
    if (!error.empty()) {
      return verdict{false, "caf: " + error};
    }
    return check(seen);
  };
}

}  // namespace strata_bench::pingpong
