// injector: the per-NUMA-node entry for tasks created outside the workers.
//
// Many producers (any thread), many consumers (every worker of the node,
// and thieves from other nodes when theirs are empty): Boost.Lockfree's
// MPMC queue (Michael-Scott with tagged pointers and a node free list). Its
// pop is linearizable, which the parking re-check relies on. A relaxed
// counter of pushes and pops gives an approximate depth for statistics.
#pragma once

#include <boost/lockfree/queue.hpp>

#include <atomic>
#include <cstdint>

#include <strata/config.hpp>
#include <strata/runtime/ext/task.hpp>

namespace strata::detail {

class injector {
 public:
  injector() : m_queue(1024) {}

  // Any thread. May allocate a queue node (outside the spawn fast path).
  void push(task* t) {
    while (!m_queue.push(t)) {
    }
    m_pushed.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics only
  }
  // Any thread.
  task* pop() noexcept {
    task* t = nullptr;
    if (!m_queue.pop(t)) return nullptr;
    return t;
  }
  std::uint64_t pushed() const noexcept { return m_pushed.load(std::memory_order_relaxed); }  // relaxed: statistics

 private:
  boost::lockfree::queue<task*> m_queue;
  alignas(k_destructive_size) std::atomic<std::uint64_t> m_pushed{0};
};

}  // namespace strata::detail
