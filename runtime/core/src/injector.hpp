// injector: the per-NUMA-node entry for tasks created outside the workers.
//
// Many producers (any thread), many consumers (every worker of the node,
// and thieves from other nodes when theirs are empty): Boost.Lockfree's
// MPMC queue (Michael-Scott with tagged pointers and a node free list). Its
// pop is linearizable, which the parking re-check relies on.
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
  }
  // Any thread.
  task* pop() noexcept {
    task* t = nullptr;
    if (!m_queue.pop(t)) return nullptr;
    return t;
  }

 private:
  boost::lockfree::queue<task*> m_queue;
};

}  // namespace strata::detail
