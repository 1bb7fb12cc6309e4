// pingpong, serial baseline: the two actors as plain objects and one FIFO of
// messages drained by the calling thread, so what remains is the protocol
// and a queue push and pop per message, without a runtime.
#include <deque>

#include "pingpong/pingpong.hpp"

namespace strata_bench::pingpong {
namespace {

enum class to : std::uint8_t { ping, pong };
struct message {
  to dest;
  std::uint32_t k;
};

class ping_pong {
 public:
  outcome run(std::uint32_t trips) {
    m_trips = trips;
    m_sent = 1;
    m_queue.push_back({to::pong, m_sent});
    while (!m_queue.empty()) {
      const message m = m_queue.front();
      m_queue.pop_front();
      if (m.dest == to::pong) {
        pong(m.k);
      } else {
        ping(m.k);
      }
    }
    return m_seen;
  }

 private:
  [[gnu::noinline]] void pong(std::uint32_t k) { m_queue.push_back({to::ping, k}); }
  [[gnu::noinline]] void ping(std::uint32_t k) {
    ++m_seen.answers;
    if (k != m_sent) {
      ++m_seen.out_of_step;
    }
    if (m_sent < m_trips) {
      m_queue.push_back({to::pong, ++m_sent});
    }
  }

  std::deque<message> m_queue;
  std::uint32_t m_trips = 0;
  std::uint32_t m_sent = 0;
  outcome m_seen;
};

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] { return check(ping_pong().run(opaque(k_round_trips))); };
}

}  // namespace strata_bench::pingpong
