// numa_alloc and the runtime's memory inside the QEMU NUMA machine
// (run_in_vm.sh): 4 nodes of 512 MiB, two CPUs each. Pages are checked with
// move_pages (strata::nodes_of) after they were written. Automatic NUMA
// balancing is switched off first, so the kernel does not move pages while
// we look. On any other machine (no --inside-vm) every test is skipped.
#include <gtest/gtest.h>
#include <sched.h>
#include <strata/strata.hpp>

#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

bool g_inside_vm = false;

#define STRATA_REQUIRE_VM() \
  if (!g_inside_vm) GTEST_SKIP() << "runs only inside the NUMA VM (tests/numa_vm/run_in_vm.sh ... --inside-vm)"

constexpr std::size_t k_page = 4096;
constexpr int k_nodes = 4;

// Nodes of every `stride`-th page of [p, p + bytes).
std::vector<int> page_nodes(const void* p, std::size_t bytes, std::size_t stride = 1) {
  std::vector<const void*> pages;
  const auto* c = static_cast<const char*>(p);
  for (std::size_t off = 0; off < bytes; off += k_page * stride) pages.push_back(c + off);
  std::vector<int> nodes(pages.size(), -2);
  strata::nodes_of(pages.data(), pages.size(), nodes.data());
  return nodes;
}

std::size_t count_of(const std::vector<int>& nodes, int node) {
  std::size_t n = 0;
  for (int x : nodes) n += x == node;
  return n;
}

TEST(NumaMemoryVm, MachineHasFourNodesAndBinding) {
  STRATA_REQUIRE_VM();
  EXPECT_TRUE(strata::numa_binding_available());
  EXPECT_EQ(strata::numa_allowed_nodes(), (std::vector<int>{0, 1, 2, 3}));
}

TEST(NumaMemoryVm, NodeAllocatorPagesLandOnTheirNode) {
  STRATA_REQUIRE_VM();
  for (int k = 0; k < k_nodes; ++k) {
    strata::numa_allocator<double> a{strata::numa_node{k}};
    std::vector<double, strata::numa_allocator<double>> v(std::size_t{4} << 20, 1.0, a);  // 32 MiB, written
    const auto nodes = page_nodes(v.data(), v.size() * sizeof(double), 8);
    EXPECT_EQ(count_of(nodes, k), nodes.size()) << "node " << k;
    // Small blocks too (they come from the node's 2 MiB chunks).
    std::vector<void*> small;
    for (int i = 0; i < 1000; ++i) {
      auto* p = static_cast<char*>(strata::numa_allocate(256, strata::memory_placement::on(strata::numa_node{k})));
      std::memset(p, 1, 256);
      small.push_back(p);
    }
    std::vector<int> small_nodes(small.size());
    strata::nodes_of(const_cast<const void* const*>(small.data()), small.size(), small_nodes.data());
    EXPECT_EQ(count_of(small_nodes, k), small.size()) << "small blocks of node " << k;
    for (void* p : small) strata::numa_deallocate(p, 256);
  }
  std::printf("%s\n", strata::numa_stats().to_json().c_str());
}

TEST(NumaMemoryVm, InterleavedSpreadsOverAllNodes) {
  STRATA_REQUIRE_VM();
  auto il = strata::numa_allocator<double>::interleaved();
  std::vector<double, strata::numa_allocator<double>> v(std::size_t{4} << 20, 2.0, il);
  const auto nodes = page_nodes(v.data(), v.size() * sizeof(double));
  for (int k = 0; k < k_nodes; ++k) {
    const double share = static_cast<double>(count_of(nodes, k)) / static_cast<double>(nodes.size());
    std::printf("interleaved: node %d holds %.1f%% of %zu pages\n", k, 100 * share, nodes.size());
    EXPECT_GT(share, 0.15) << "node " << k;  // huge pages interleave 2 MiB at a time
    EXPECT_LT(share, 0.35) << "node " << k;
  }
}

TEST(NumaMemoryVm, WorkersRunWhereTheyArePlacedAndTheirMemoryIsLocal) {
  STRATA_REQUIRE_VM();
  strata::runtime rt;  // one worker per core: 8, pinned
  ASSERT_TRUE(rt.pinned());
  ASSERT_EQ(rt.num_workers(), 8u);
  for (unsigned w = 0; w < rt.num_workers(); ++w) {
    const auto& place = rt.placement()[w];
    const int cpu = rt.submit_on(strata::worker_id{w}, [] {
                       strata::task_group g;  // gives the worker a frame slab
                       g.run([] {});
                       g.wait();
                       return sched_getcpu();
                     }).get();
    EXPECT_EQ(cpu, place.pu_os_index) << "worker " << w;
    const auto& worker = *rt.core().workers[w];
    EXPECT_EQ(strata::node_of(&worker), place.numa_os_index) << "worker " << w << " object";
    EXPECT_EQ(strata::node_of(&worker.inbox), place.numa_os_index) << "worker " << w << " inbox";
  }
}

// First touch with numa_static, then check sampled pages fully inside each
// worker's chunk: all on that worker's node. The same for per-node chunks.
TEST(NumaMemoryVm, FirstTouchAndPerNodeChunksAreAllLocal) {
  STRATA_REQUIRE_VM();
  strata::runtime rt;
  const unsigned p = rt.num_workers();
  const std::size_t n = std::size_t{8} << 20;  // 64 MiB of doubles
  const std::size_t bytes = n * sizeof(double);
  auto* a = static_cast<double*>(strata::numa_allocate(bytes, strata::memory_placement::unbound()));
  strata::first_touch(rt, a, n, 1.0);
  std::size_t sampled = 0, local = 0;
  for (unsigned w = 0; w < p; ++w) {
    const std::size_t lo = n * w / p, hi = n * (w + 1) / p;
    const char* first_page = reinterpret_cast<const char*>(
        (reinterpret_cast<std::uintptr_t>(a + lo) + k_page - 1) & ~std::uintptr_t{k_page - 1});
    const char* end = reinterpret_cast<const char*>(a + hi);
    const auto nodes = page_nodes(first_page, static_cast<std::size_t>(end - first_page) - k_page, 4);
    sampled += nodes.size();
    local += count_of(nodes, rt.placement()[w].numa_os_index);
    EXPECT_EQ(count_of(nodes, rt.placement()[w].numa_os_index), nodes.size()) << "worker " << w;
  }
  std::printf("first_touch + numa_static: %zu of %zu sampled pages local (%.1f%%)\n", local, sampled,
              100.0 * static_cast<double>(local) / static_cast<double>(sampled));
  // A later numa_static loop over the same range runs on the same workers.
  std::vector<int> wrong(p, 0);
  strata::parallel_for(
      rt, 0, n, 4096,
      [&](std::size_t lo, std::size_t hi) {
        const unsigned w = strata::this_worker()->value;
        if (lo < n * w / p || hi > n * (w + 1) / p) wrong[w] = 1;
        for (std::size_t i = lo; i < hi; ++i) a[i] *= 2;
      },
      strata::partition::numa_static);
  for (unsigned w = 0; w < p; ++w) EXPECT_EQ(wrong[w], 0) << "worker " << w << " ran outside its chunk";
  strata::numa_deallocate(a, bytes);

  // Per-node chunks: each worker's chunk from its own node's arena.
  std::vector<double*> chunks(p);
  for (unsigned w = 0; w < p; ++w) {
    const std::size_t len = (n * (w + 1) / p - n * w / p) * sizeof(double);
    chunks[w] = static_cast<double*>(strata::numa_allocate(
        len, strata::memory_placement::on(strata::numa_node{rt.placement()[w].numa_os_index})));
    std::memset(chunks[w], 0, len);  // written by this thread: the binding decides, not first touch
    const auto nodes = page_nodes(chunks[w], len, 4);
    EXPECT_EQ(count_of(nodes, rt.placement()[w].numa_os_index), nodes.size()) << "worker " << w;
    strata::numa_deallocate(chunks[w], len);
  }
}

TEST(NumaMemoryVm, RemoteFreesGoBackToTheOwningNode) {
  STRATA_REQUIRE_VM();
  const auto t = strata::topology::discover();
  const auto node3 = strata::memory_placement::on(strata::numa_node{3});
  std::thread th([&] {
    t.bind_current_thread(0);  // CPU 0: node 0
    const auto before = strata::numa_stats().find_node(3)->remote_frees;
    std::vector<void*> blocks;
    for (int i = 0; i < 1000; ++i) blocks.push_back(strata::numa_allocate(64, node3));
    for (void* p : blocks) strata::numa_deallocate(p, 64);
    EXPECT_EQ(strata::numa_stats().find_node(3)->remote_frees - before, 1000u);
    // Allocating on node 0 now never returns a node-3 block.
    for (int i = 0; i < 1000; ++i) {
      auto* p = static_cast<char*>(strata::numa_allocate(64, strata::memory_placement::local()));
      *p = 1;
      EXPECT_EQ(strata::node_of(p), 0);
      blocks[static_cast<std::size_t>(i)] = p;
    }
    for (void* p : blocks) strata::numa_deallocate(p, 64);
  });
  th.join();
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--inside-vm") == 0) g_inside_vm = true;
  }
  if (g_inside_vm) {
    // The kernel's NUMA balancing would migrate pages while we look at them.
    if (std::FILE* f = std::fopen("/proc/sys/kernel/numa_balancing", "w")) {
      std::fputs("0\n", f);
      std::fclose(f);
    }
  }
  return RUN_ALL_TESTS();
}
