// inbox under concurrency: 4 producers x 2.5e6 nodes, each consumed exactly
// once, FIFO per producer (label stress; TSAN runs this).
#include <gtest/gtest.h>
#include <strata/runtime/ext/inbox.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "scale.hpp"

namespace {

struct node {
  std::atomic<node*> next{nullptr};
  unsigned producer = 0;
  std::size_t seq = 0;
};

using node_inbox = strata::inbox<node, &node::next>;

TEST(Inbox, FourProducersExactlyOnceFifoPerProducer) {
  constexpr unsigned k_producers = 4;
  const std::size_t per = strata::test::scaled(2'500'000);
  std::vector<std::unique_ptr<node[]>> nodes;
  for (unsigned p = 0; p < k_producers; ++p) {
    nodes.emplace_back(new node[per]);
    for (std::size_t i = 0; i < per; ++i) {
      nodes[p][i].producer = p;
      nodes[p][i].seq = i;
    }
  }
  node_inbox q;
  std::atomic<bool> go{false};
  std::vector<std::thread> producers;
  for (unsigned p = 0; p < k_producers; ++p) {
    producers.emplace_back([&, p] {
      while (!go.load(std::memory_order_acquire)) {
      }
      for (std::size_t i = 0; i < per; ++i) q.push(&nodes[p][i]);
    });
  }
  std::vector<std::size_t> next_seq(k_producers, 0);
  std::size_t got = 0, order_errors = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  go.store(true, std::memory_order_release);
  node* out = nullptr;
  while (got < per * k_producers && std::chrono::steady_clock::now() < deadline) {
    if (q.pop(out) != node_inbox::pop_status::item) continue;
    order_errors += out->seq != next_seq[out->producer];
    next_seq[out->producer] = out->seq + 1;
    ++got;
  }
  for (auto& t : producers) t.join();
  EXPECT_EQ(got, per * k_producers) << "lost nodes (or timed out)";
  EXPECT_EQ(order_errors, 0u) << "FIFO per producer violated";
  for (unsigned p = 0; p < k_producers; ++p) EXPECT_EQ(next_seq[p], per);
  EXPECT_EQ(q.pop(out), node_inbox::pop_status::empty) << "nothing may be consumed twice";
}

}  // namespace
