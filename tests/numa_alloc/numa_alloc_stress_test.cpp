// Cross-free stress: blocks allocated on one worker and freed on another,
// concurrently, exactly once each, and every byte accounted for at the end.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include <strata/strata.hpp>

#include "runtime_config.hpp"
#include "scale.hpp"

namespace {

using strata::memory_placement;

struct handoff {
  std::mutex m;
  std::deque<std::vector<std::uint64_t*>> batches;
  bool done = false;
};

std::size_t size_of(std::uint64_t id) { return 16u << (id % 9); }  // 16 B .. 4 KiB

TEST(CrossFree, MillionBlocksAllocatedOnOneWorkerFreedOnAnother) {
  const std::uint64_t n = strata::test::scaled(1'000'000);
  constexpr std::size_t k_batch = 1000;
  const std::int64_t before = static_cast<std::int64_t>(strata::numa_stats().total_in_use());
  {
    strata::runtime rt(strata::test::workers(2));
    handoff h;
    std::vector<std::uint8_t> seen(n, 0);
    std::atomic<std::uint64_t> freed{0};
    auto producer = rt.submit_on(strata::worker_id{0}, [&] {
      std::vector<std::uint64_t*> batch;
      for (std::uint64_t id = 0; id < n; ++id) {
        auto* p = static_cast<std::uint64_t*>(strata::numa_allocate(size_of(id), memory_placement::local()));
        p[0] = id;
        p[size_of(id) / 8 - 1] = ~id;
        batch.push_back(p);
        if (batch.size() == k_batch || id + 1 == n) {
          std::lock_guard lock(h.m);
          h.batches.push_back(std::move(batch));
          batch.clear();
        }
      }
      std::lock_guard lock(h.m);
      h.done = true;
    });
    auto consumer = rt.submit_on(strata::worker_id{1}, [&] {
      for (;;) {
        std::vector<std::uint64_t*> batch;
        {
          std::lock_guard lock(h.m);
          if (h.batches.empty()) {
            if (h.done) return;
          } else {
            batch = std::move(h.batches.front());
            h.batches.pop_front();
          }
        }
        if (batch.empty()) {
          std::this_thread::yield();
          continue;
        }
        for (std::uint64_t* p : batch) {
          const std::uint64_t id = p[0];
          ASSERT_LT(id, n);
          ASSERT_EQ(p[size_of(id) / 8 - 1], ~id) << "block " << id << " was overwritten";
          ++seen[id];
          strata::numa_deallocate(p, size_of(id));
          freed.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after the futures
        }
      }
    });
    producer.get();
    consumer.get();
    EXPECT_EQ(freed.load(std::memory_order_relaxed), n);
    std::uint64_t once = 0;
    for (std::uint8_t s : seen) once += s == 1;
    EXPECT_EQ(once, n) << "every block freed exactly once";
  }
  EXPECT_EQ(static_cast<std::int64_t>(strata::numa_stats().total_in_use()), before) << "bytes still outstanding";
}

// Many threads allocating and freeing each other's blocks on every arena.
TEST(CrossFree, EightThreadsShuffleBlocksAcrossArenas) {
  const std::int64_t before = static_cast<std::int64_t>(strata::numa_stats().total_in_use());
  const std::vector<memory_placement> where{memory_placement::local(), memory_placement::interleaved(),
                                            memory_placement::unbound()};
  constexpr int k_threads = 8;
  const std::size_t per_thread = strata::test::scaled(50'000);
  std::vector<std::vector<void*>> made(k_threads);
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < per_thread; ++i) {
        made[static_cast<std::size_t>(t)].push_back(strata::numa_allocate(16u << (i % 9), where[i % 3]));
      }
    });
  }
  for (auto& th : threads) th.join();
  threads.clear();
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {  // frees the blocks of the next thread
      auto& blocks = made[static_cast<std::size_t>((t + 1) % k_threads)];
      for (std::size_t i = 0; i < blocks.size(); ++i) strata::numa_deallocate(blocks[i], 16u << (i % 9));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(static_cast<std::int64_t>(strata::numa_stats().total_in_use()), before);
}

}  // namespace
