// Actor stress: 4 external senders x 10^6 messages to one actor, every one
// counted exactly once, FIFO per sender; and a ring of actors spread over
// the workers passing a token (cross-worker traffic, parking and waking).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

struct stamp {
  unsigned sender;
  std::uint64_t seq;
};
struct report {};

struct tally : strata::actor<tally> {
  std::vector<std::uint64_t> next;
  std::uint64_t total = 0, out_of_order = 0;
  explicit tally(unsigned senders) : next(senders, 0) {}
  void receive(strata::actor_context&, const stamp& s) {
    if (s.seq != next[s.sender]) ++out_of_order;
    next[s.sender] = s.seq + 1;
    ++total;
  }
  std::vector<std::uint64_t> receive(strata::actor_context&, const report&) {
    std::vector<std::uint64_t> r{total, out_of_order};
    r.insert(r.end(), next.begin(), next.end());
    return r;
  }
};

TEST(ActorStress, FourExternalSendersMillionMessagesEachExactlyOnce) {
  strata::runtime rt(strata::test::workers(2));
  constexpr unsigned k_senders = 4;
  const std::uint64_t per = strata::test::scaled(1'000'000);
  auto t = rt.spawn_actor<tally>(k_senders);
  std::vector<std::thread> senders;
  for (unsigned s = 0; s < k_senders; ++s) {
    senders.emplace_back([&, s] {
      for (std::uint64_t i = 0; i < per; ++i) t.send(stamp{s, i});
    });
  }
  for (auto& th : senders) th.join();
  const auto r = t.ask(report{}).get();
  EXPECT_EQ(r[0], k_senders * per);
  EXPECT_EQ(r[1], 0u) << "out of order";
  for (unsigned s = 0; s < k_senders; ++s) EXPECT_EQ(r[2 + s], per) << "sender " << s;
  rt.wait_idle();
  std::uint64_t dead = 0;
  for (const auto& w : rt.stats().workers) dead += w.counter("dead_letters");
  EXPECT_EQ(dead, 0u);
}

struct token {
  std::uint64_t hops_left;
};
struct ring_node : strata::actor<ring_node> {
  strata::actor_ref<ring_node> next;
  std::atomic<std::uint64_t>* passes;
  explicit ring_node(std::atomic<std::uint64_t>* p) : passes(p) {}
  void receive(strata::actor_context&, const strata::actor_ref<ring_node>& n) { next = n; }
  void receive(strata::actor_context&, const token& t) {
    passes->fetch_add(1, std::memory_order_relaxed);  // relaxed: read after wait_idle
    if (t.hops_left > 0) next.send(token{t.hops_left - 1});
  }
};

TEST(ActorStress, TokenRingAcrossWorkers) {
  strata::runtime rt(strata::test::workers(3));
  constexpr int k_nodes = 100;
  const std::uint64_t hops = strata::test::scaled(300'000);
  std::atomic<std::uint64_t> passes{0};
  std::vector<strata::actor_ref<ring_node>> ring;
  for (int i = 0; i < k_nodes; ++i) ring.push_back(rt.spawn_actor<ring_node>(&passes));  // round robin: 3 workers
  for (int i = 0; i < k_nodes; ++i) ring[static_cast<std::size_t>(i)].send(ring[static_cast<std::size_t>((i + 1) % k_nodes)]);
  rt.wait_idle();
  ring[0].send(token{hops});
  rt.wait_idle();
  EXPECT_EQ(passes.load(), hops + 1);
}

}  // namespace
