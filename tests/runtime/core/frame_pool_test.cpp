// frame_pool: frames freed by another worker's pool go home in batches
// (free_to / flush_outgoing), every one of them, and are reused there. The
// concurrent path (a thief and an owner at once) runs in the runtime and
// actor stress tests.
#include <gtest/gtest.h>
#include <strata/runtime/ext/frame_pool.hpp>

#include <atomic>
#include <cstddef>
#include <set>
#include <thread>
#include <vector>

namespace {

using strata::detail::frame_pool;
using strata::detail::task;

constexpr std::size_t k_slab = frame_pool::k_slab_frames;

// Takes n frames from p.
std::vector<task*> take(frame_pool& p, std::size_t n) {
  std::vector<task*> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(p.allocate());
  return v;
}

TEST(FramePool, FramesFreedByAnotherPoolComeHomeAndAreReused) {
  frame_pool home, other;
  home.set_home(0);
  other.set_home(1);
  const std::vector<task*> first = take(home, k_slab);  // the whole first slab
  ASSERT_EQ(home.slabs(), 1u);
  for (task* t : first) EXPECT_EQ(t->home, 0u);
  for (task* t : first) other.free_to(home, t);
  other.flush_outgoing();  // the last, partial batch
  const std::vector<task*> again = take(home, k_slab);
  EXPECT_EQ(home.slabs(), 1u) << "a frame did not come home";
  EXPECT_EQ(std::set<task*>(again.begin(), again.end()), std::set<task*>(first.begin(), first.end()));
  EXPECT_EQ(other.slabs(), 0u);
}

TEST(FramePool, AFullBatchGoesHomeWithoutAFlush) {
  frame_pool home, other;
  home.set_home(0);
  other.set_home(1);
  const std::vector<task*> first = take(home, k_slab);
  for (std::size_t i = 0; i < frame_pool::k_return_batch; ++i) other.free_to(home, first[i]);
  // Exactly one batch is home: the pool uses it before it takes a new slab.
  take(home, frame_pool::k_return_batch);
  EXPECT_EQ(home.slabs(), 1u);
  take(home, 1);
  EXPECT_EQ(home.slabs(), 2u) << "more than a batch came home, or less";
}

TEST(FramePool, FramesOfTwoHomesEachGoToTheirOwn) {
  frame_pool a, b, thief;
  a.set_home(0);
  b.set_home(1);
  thief.set_home(2);
  const std::vector<task*> from_a = take(a, k_slab);
  const std::vector<task*> from_b = take(b, k_slab);
  for (std::size_t i = 0; i < k_slab; ++i) {  // alternating homes: a chain per run of one home
    thief.free_to(a, from_a[i]);
    if (i % 3 == 0) thief.free_to(b, from_b[i / 3]);
  }
  for (std::size_t i = k_slab / 3 + 1; i < k_slab; ++i) thief.free_to(b, from_b[i]);
  thief.flush_outgoing();
  const std::vector<task*> again_a = take(a, k_slab);
  const std::vector<task*> again_b = take(b, k_slab);
  EXPECT_EQ(a.slabs(), 1u);
  EXPECT_EQ(b.slabs(), 1u);
  for (task* t : again_a) EXPECT_EQ(t->home, 0u);
  for (task* t : again_b) EXPECT_EQ(t->home, 1u);
  EXPECT_EQ(std::set<task*>(again_a.begin(), again_a.end()), std::set<task*>(from_a.begin(), from_a.end()));
  EXPECT_EQ(std::set<task*>(again_b.begin(), again_b.end()), std::set<task*>(from_b.begin(), from_b.end()));
}

// Two threads return frames to one home at once (their chains race on the
// home's remote stack): every frame comes back exactly once.
TEST(FramePool, ConcurrentReturnsLoseNoFrame) {
  frame_pool home;
  home.set_home(0);
  constexpr std::size_t k_frames = 8 * k_slab;
  const std::vector<task*> all = take(home, k_frames);
  const std::size_t slabs = home.slabs();
  std::atomic<bool> go{false};
  auto give_back = [&](std::size_t from, std::size_t to) {
    frame_pool mine;
    mine.set_home(1);
    while (!go.load()) std::this_thread::yield();
    for (std::size_t i = from; i < to; ++i) mine.free_to(home, all[i]);
    mine.flush_outgoing();
  };
  std::thread t1(give_back, 0, k_frames / 2);
  std::thread t2(give_back, k_frames / 2, k_frames);
  go.store(true);
  t1.join();
  t2.join();
  std::set<task*> back;
  for (std::size_t i = 0; i < k_frames; ++i) back.insert(home.allocate());
  EXPECT_EQ(home.slabs(), slabs) << "a frame was lost on its way home";
  EXPECT_EQ(back, std::set<task*>(all.begin(), all.end()));
}

}  // namespace
