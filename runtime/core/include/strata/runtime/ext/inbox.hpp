// inbox<Node>: a multi-producer single-consumer FIFO of intrusive nodes.
//
// The problem. Anyone may hand a worker a task for it alone (submit_on,
// routed external submits, later actor messages); only that worker takes
// them out. Producers must never block each other or the consumer.
//
// The protocol is Dmitry Vyukov's intrusive MPSC queue: a producer links its
// node in with one atomic exchange on the tail and then a store into the old
// tail's next pointer; the consumer walks next pointers from its private
// head, using a stub node so the queue is never structurally empty. Push is
// wait-free (one XCHG); pop is lock-free for the consumer. FIFO per producer
// follows from the exchange order. Between a producer's exchange and its
// link store the queue looks empty past that node: pop reports `busy`
// (retry soon), never loses the node.
//
// Rejected: a mutex queue (producers serialise), Boost.Lockfree's MPMC queue
// (a CAS loop per push and node allocation; it serves the injector, where
// several consumers are needed).
//
// Node must have a member `std::atomic<Node*> next` usable by the inbox.
#pragma once

#include <atomic>
#include <cstdint>

#include <strata/config.hpp>

namespace strata {

template <class Node, std::atomic<Node*> Node::*Next>
class inbox {
 public:
  enum class pop_status { item, empty, busy };

  inbox() noexcept {
    // relaxed: construction happens before the inbox is shared.
    (m_stub.*Next).store(nullptr, std::memory_order_relaxed);
    m_head = &m_stub;
    m_tail.store(&m_stub, std::memory_order_relaxed);
  }
  inbox(const inbox&) = delete;
  inbox& operator=(const inbox&) = delete;

  // Any thread. Wait-free.
  void push(Node* n) noexcept {
    (n->*Next).store(nullptr, std::memory_order_relaxed);  // relaxed: published by the exchange below
    // acq_rel exchange: orders this push after earlier pushes of the same
    // producer (FIFO) and hands the node to the consumer's acquire below.
    Node* prev = m_tail.exchange(n, std::memory_order_acq_rel);
    // release: publishes n (and its contents) to the consumer's acquire load of next.
    (prev->*Next).store(n, std::memory_order_release);
    // relaxed: a depth counter for statistics and for quick emptiness checks;
    // correctness rests on the links above.
    m_pushed.fetch_add(1, std::memory_order_relaxed);
  }

  // Consumer only.
  pop_status pop(Node*& out) noexcept {
    Node* head = m_head;
    // acquire: pairs with the release store of next in push.
    Node* next = (head->*Next).load(std::memory_order_acquire);
    if (head == &m_stub) {
      // acquire: pairs with the exchange in push (a producer between its two stores).
      if (next == nullptr) return m_tail.load(std::memory_order_acquire) == &m_stub ? pop_status::empty
                                                                                  : pop_status::busy;
      m_head = next;
      head = next;
      next = (next->*Next).load(std::memory_order_acquire);  // acquire: as above
    }
    if (next != nullptr) {
      m_head = next;
      out = head;
      ++m_popped;
      return pop_status::item;
    }
    // head is the last node: re-insert the stub behind it so head can leave.
    // acquire: pairs with the exchange in push.
    if (m_tail.load(std::memory_order_acquire) != head) return pop_status::busy;
    push_stub();
    next = (head->*Next).load(std::memory_order_acquire);  // acquire: as above
    if (next != nullptr) {
      m_head = next;
      out = head;
      ++m_popped;
      return pop_status::item;
    }
    return pop_status::busy;
  }

  // Consumer only: true exactly when pop() would report `empty` now
  // (nothing queued, no producer between its two stores).
  bool empty() const noexcept {
    // acquire: as in pop (pairs with the release store of next and the exchange in push).
    return m_head == &m_stub && (m_stub.*Next).load(std::memory_order_acquire) == nullptr &&
           m_tail.load(std::memory_order_acquire) == &m_stub;
  }
  std::uint64_t depth() const noexcept {
    // relaxed: statistics. m_popped is the consumer's; read racily here.
    const auto pushed = m_pushed.load(std::memory_order_relaxed);
    const auto popped = m_popped_shadow.load(std::memory_order_relaxed);
    return pushed > popped ? pushed - popped : 0;
  }
  // Consumer: publishes its pop count for depth() readers.
  void publish_depth() noexcept { m_popped_shadow.store(m_popped, std::memory_order_relaxed); }

 private:
  void push_stub() noexcept {
    (m_stub.*Next).store(nullptr, std::memory_order_relaxed);  // relaxed: published by the exchange below
    Node* prev = m_tail.exchange(&m_stub, std::memory_order_acq_rel);  // acq_rel: as in push
    (prev->*Next).store(&m_stub, std::memory_order_release);           // release: as in push
  }

  // Written by producers (exchange); read by the consumer.
  alignas(k_destructive_size) std::atomic<Node*> m_tail;
  alignas(k_destructive_size) std::atomic<std::uint64_t> m_pushed{0};  // producers: fetch_add
  // Consumer-private.
  alignas(k_destructive_size) Node* m_head;
  std::uint64_t m_popped = 0;
  std::atomic<std::uint64_t> m_popped_shadow{0};  // consumer writes, anyone reads
  Node m_stub{};
};

}  // namespace strata
