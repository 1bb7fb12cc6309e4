// counting, serial baseline: producer and counter as plain objects, the
// counter's mailbox a FIFO that the producer fills with its 1,000,000
// increments and the retrieve, then the calling thread drains it (a queue
// push and pop per message, no runtime).
#include <deque>

#include "counting/counting.hpp"

namespace strata_bench::counting {
namespace {

enum class kind : std::uint8_t { increment, retrieve };

class producer_counter {
 public:
  std::uint64_t run(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) {
      m_mailbox.push_back(kind::increment);
    }
    m_mailbox.push_back(kind::retrieve);
    while (!m_mailbox.empty()) {
      const kind k = m_mailbox.front();
      m_mailbox.pop_front();
      receive(k);
    }
    return m_answer;
  }

 private:
  [[gnu::noinline]] void receive(kind k) {
    if (k == kind::increment) {
      ++m_count;
    } else {
      m_answer = m_count;
      m_count = 0;
    }
  }

  std::deque<kind> m_mailbox;
  std::uint64_t m_count = 0;
  std::uint64_t m_answer = 0;
};

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] { return check(producer_counter().run(opaque(k_messages))); };
}

}  // namespace strata_bench::counting
