// threadring, serial baseline: the ring as plain objects and one FIFO of
// messages drained by the calling thread (a queue push and pop per pass,
// no runtime).
#include <deque>

#include "threadring/threadring.hpp"

namespace strata_bench::threadring {
namespace {

struct token {
  std::uint32_t to;
  std::uint32_t count;
};

class ring {
 public:
  outcome run(std::uint32_t passes) {
    m_seen = {};
    m_queue.push_back({0, passes});
    while (!m_queue.empty()) {
      const token t = m_queue.front();
      m_queue.pop_front();
      receive(t);
    }
    return m_seen;
  }

 private:
  [[gnu::noinline]] void receive(const token& t) {
    if (t.count == 0) {
      m_seen.last = t.to;
      return;
    }
    ++m_seen.passes[t.to].n;
    m_queue.push_back({(t.to + 1) % k_actors, t.count - 1});
  }

  std::deque<token> m_queue;
  outcome m_seen;
};

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] { return check(ring().run(opaque(k_passes))); };
}

}  // namespace strata_bench::threadring
