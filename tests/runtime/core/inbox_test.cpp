// inbox: single-threaded FIFO and emptiness (the concurrent test is inbox_stress_test).
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

TEST(Inbox, SingleThreadFifo) {
  node_inbox q;
  std::vector<node> nodes(10);
  node* out = nullptr;
  EXPECT_EQ(q.pop(out), node_inbox::pop_status::empty);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].seq = i;
    q.push(&nodes[i]);
  }
  EXPECT_EQ(q.depth(), 10u);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(q.pop(out), node_inbox::pop_status::item);
    EXPECT_EQ(out->seq, i);
  }
  EXPECT_EQ(q.pop(out), node_inbox::pop_status::empty);
  q.publish_depth();
  EXPECT_EQ(q.depth(), 0u);
}

}  // namespace
