// strata-micro: the measurements behind three design choices of the runtime.
//
// 1. Deque: a push/pop pair on the owner's private part (split deque, no
//    fence) against the same pair through the shared part, which is exactly
//    Chase-Lev's take (Le et al.): store, seq_cst fence, load, and a CAS on
//    the last element. Both on worker_deque, single thread, so the difference
//    is the protocol's cost and nothing else.
// 2. Injector: Boost.Lockfree's MPMC queue (the injector) against strata's
//    MPSC inbox, one producer and one consumer thread, 10^7 items, and four
//    producers, to show what multi-consumer safety costs.
// 3. Hand-off latency across cores: one item in flight between two
//    threads, each spinning on its own inbox and pushing the item into the
//    other's (a message between two workers without the runtime around
//    it), against a flag the two threads hand back and forth (one cache
//    line: the machine's floor). Each node and the flag on lines of their
//    own (128 bytes), as the runtime's frames are; a pause between polls,
//    as in the workers' spin loops. Reported per one-way hop.
//
// Prints one line per measurement: name, ns per operation (median of 5).
#include <boost/lockfree/queue.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <strata/runtime/ext/deque.hpp>
#include <strata/runtime/ext/inbox.hpp>

namespace {

using clock_type = std::chrono::steady_clock;

template <class F>
double median_ns_per_op(std::size_t ops, F&& f) {
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = clock_type::now();
    f();
    const auto t1 = clock_type::now();
    runs.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(ops));
  }
  std::sort(runs.begin(), runs.end());
  return runs[2];
}

// Between two polls, as the workers' spin loops do.
inline void spin_pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct node {
  std::atomic<node*> next{nullptr};
  std::uint64_t value = 0;
};

}  // namespace

int main() {
  constexpr std::size_t k_pairs = 20'000'000;
  std::uint64_t sink = 0;

  strata::worker_deque<std::uintptr_t> d(1024);
  const double private_pair = median_ns_per_op(k_pairs, [&] {
    std::uintptr_t x = 0;
    for (std::size_t i = 0; i < k_pairs; ++i) {
      d.push(i + 1);
      d.pop(x);
      sink += x;
    }
  });
  const double shared_pair = median_ns_per_op(k_pairs, [&] {
    std::uintptr_t x = 0;
    for (std::size_t i = 0; i < k_pairs; ++i) {
      d.push(i + 1);
      (void)d.publish();  // the element is now in the shared part: pop takes it back
      d.pop(x);
      sink += x;
    }
  });
  std::printf("deque push+pop, private part (split deque)      %6.2f ns\n", private_pair);
  std::printf("deque push+pop, shared part (Chase-Lev take)    %6.2f ns\n", shared_pair);

  constexpr std::size_t k_items = 10'000'000;
  for (unsigned producers : {1u, 4u}) {
    const std::size_t per = k_items / producers;
    boost::lockfree::queue<std::uint64_t> q(1024);
    const double boost_ns = median_ns_per_op(per * producers, [&] {
      std::vector<std::thread> ps;
      for (unsigned p = 0; p < producers; ++p) {
        ps.emplace_back([&] {
          for (std::size_t i = 0; i < per; ++i) {
            while (!q.push(i + 1)) {
            }
          }
        });
      }
      std::size_t got = 0;
      std::uint64_t v = 0;
      while (got < per * producers) {
        if (q.pop(v)) {
          ++got;
          sink += v;
        }
      }
      for (auto& t : ps) t.join();
    });
    std::vector<node> nodes(per * producers);
    strata::inbox<node, &node::next> in;
    const double inbox_ns = median_ns_per_op(per * producers, [&] {
      std::vector<std::thread> ps;
      for (unsigned p = 0; p < producers; ++p) {
        ps.emplace_back([&, p] {
          for (std::size_t i = 0; i < per; ++i) in.push(&nodes[p * per + i]);
        });
      }
      std::size_t got = 0;
      node* n = nullptr;
      while (got < per * producers) {
        if (in.pop(n) == strata::inbox<node, &node::next>::pop_status::item) {
          ++got;
          sink += n->value;
        }
      }
      for (auto& t : ps) t.join();
    });
    std::printf("queue, %u producer(s) -> 1 consumer: Boost.Lockfree MPMC %6.2f ns, strata MPSC inbox %6.2f ns\n",
                producers, boost_ns, inbox_ns);
  }
  constexpr std::size_t k_trips = 200'000;
  using node_inbox = strata::inbox<node, &node::next>;
  const double inbox_hop = median_ns_per_op(2 * k_trips, [&] {
    node_inbox to_b, to_a;
    alignas(128) node na;
    alignas(128) node nb;
    auto take = [](node_inbox& q) {
      node* n = nullptr;
      while (q.pop(n) != node_inbox::pop_status::item) {
        spin_pause();
      }
      return n;
    };
    std::thread b([&] {
      for (std::size_t i = 0; i < k_trips; ++i) {
        nb.value = take(to_b)->value + 1;
        to_a.push(&nb);
      }
    });
    for (std::size_t i = 0; i < k_trips; ++i) {
      na.value = i;
      to_b.push(&na);
      sink += take(to_a)->value;
    }
    b.join();
  });
  const double line_hop = median_ns_per_op(2 * k_trips, [&] {
    alignas(128) std::atomic<std::uint64_t> flag{0};
    std::thread b([&] {
      for (std::uint64_t i = 0; i < k_trips; ++i) {
        while (flag.load(std::memory_order_acquire) != 2 * i + 1) {  // acquire: pairs with a's release
          spin_pause();
        }
        flag.store(2 * i + 2, std::memory_order_release);  // release: pairs with a's acquire
      }
    });
    for (std::uint64_t i = 0; i < k_trips; ++i) {
      flag.store(2 * i + 1, std::memory_order_release);  // release: pairs with b's acquire
      while (flag.load(std::memory_order_acquire) != 2 * i + 2) {  // acquire: pairs with b's release
        spin_pause();
      }
    }
    b.join();
  });
  std::printf("hand-off across two threads, per hop: strata MPSC inbox %6.1f ns, one cache line %6.1f ns\n", inbox_hop,
              line_hop);
  return sink == 42 ? 1 : 0;  // keeps the work observable
}
