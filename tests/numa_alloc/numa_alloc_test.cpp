// numa_alloc on this machine and on synthetic ones: placements, errors,
// statistics, STL use, thread exit, the runtime's own memory, first_touch.
// Page placement across several nodes is checked in the NUMA VM
// (tests/numa_vm); here every allowed node is checked the same way.
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <strata/strata.hpp>

#include "json_reader.hpp"
#include "runtime_config.hpp"

namespace {

using strata::memory_placement;

std::int64_t in_use(const char* arena) {
  for (const auto& a : strata::numa_stats().arenas) {
    if (a.arena == arena) return static_cast<std::int64_t>(a.bytes_in_use);
  }
  ADD_FAILURE() << "no arena " << arena;
  return -1;
}

std::int64_t total_in_use() { return static_cast<std::int64_t>(strata::numa_stats().total_in_use()); }

int first_node() { return strata::numa_allowed_nodes().front(); }

std::vector<memory_placement> every_placement() {
  std::vector<memory_placement> all{memory_placement::local(), memory_placement::interleaved(),
                                    memory_placement::unbound()};
  for (int n : strata::numa_allowed_nodes()) all.push_back(memory_placement::on(strata::numa_node{n}));
  return all;
}

TEST(Placement, NodeThatDoesNotExistIsAClearError) {
  const int missing = strata::numa_allowed_nodes().back() + 64;
  for (int bad : {missing, -1}) {
    try {
      strata::numa_allocator<int> a{strata::numa_node{bad}};
      FAIL() << "node " << bad << " was accepted";
    } catch (const strata::numa_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("NUMA node " + std::to_string(bad) + " does not exist"), std::string::npos) << what;
      EXPECT_NE(what.find("allowed nodes: " + std::to_string(first_node())), std::string::npos) << what;
    }
    EXPECT_THROW((void)strata::numa_allocate(64, memory_placement::on(strata::numa_node{bad})), strata::numa_error);
  }
}

TEST(Placement, BadAlignmentNamesWhatIsAccepted) {
  for (std::size_t align : {std::size_t{0}, std::size_t{3}, std::size_t{8192}}) {
    try {
      (void)strata::numa_allocate(64, memory_placement::unbound(), align);
      FAIL() << "alignment " << align << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("a power of two from 1 to 4096"), std::string::npos) << e.what();
    }
  }
}

TEST(Placement, DescribeNamesEveryKind) {
  EXPECT_EQ(memory_placement::on(strata::numa_node{2}).describe(), "node 2");
  EXPECT_EQ(memory_placement::local().describe(), "local");
  EXPECT_EQ(memory_placement::interleaved().describe(), "interleaved");
  EXPECT_EQ(memory_placement::unbound().describe(), "unbound");
}

// Blocks of many sizes and alignments: distinct, aligned, writable, and
// every byte is returned.
TEST(Allocate, BlocksAreDistinctAlignedWritableAndReturned) {
  const std::int64_t before = total_in_use();
  std::mt19937_64 rng(7);
  for (memory_placement where : every_placement()) {
    struct block {
      unsigned char* p;
      std::size_t size;
      std::size_t align;
    };
    std::vector<block> blocks;
    for (int i = 0; i < 3000; ++i) {
      const std::size_t size = 1 + rng() % (i % 10 == 0 ? 200000 : 5000);
      const std::size_t align = std::size_t{1} << (rng() % 13);  // 1 .. 4096
      auto* p = static_cast<unsigned char*>(strata::numa_allocate(size, where, align));
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u) << "size " << size << " align " << align;
      std::memset(p, i & 0xff, size);
      blocks.push_back({p, size, align});
    }
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const block& b = blocks[i];
      for (std::size_t k = 0; k < b.size; k += 97) ASSERT_EQ(b.p[k], static_cast<unsigned char>(i & 0xff)) << i;
      ASSERT_EQ(b.p[b.size - 1], static_cast<unsigned char>(i & 0xff));
    }
    for (const block& b : blocks) strata::numa_deallocate(b.p, b.size, b.align);
    EXPECT_EQ(total_in_use(), before) << where.describe();
  }
}

TEST(Allocate, FreedBlocksAreReusedForTheSamePlacementOnly) {
  const auto node = memory_placement::on(strata::numa_node{first_node()});
  void* a = strata::numa_allocate(48, node);
  strata::numa_deallocate(a, 48);
  void* b = strata::numa_allocate(48, memory_placement::unbound());
  EXPECT_NE(a, b) << "a block of a node arena was handed to the unbound arena";
  void* c = strata::numa_allocate(48, node);
  EXPECT_EQ(a, c) << "the thread cache returns the block it just got back (LIFO)";
  strata::numa_deallocate(b, 48);
  strata::numa_deallocate(c, 48);
}

TEST(Allocate, PagesAreUntouchedUntilWritten) {
  const std::size_t bytes = std::size_t{8} << 20;
  for (memory_placement where : every_placement()) {
    auto* p = static_cast<char*>(strata::numa_allocate(bytes, where));
    EXPECT_EQ(strata::node_of(p + bytes / 2), -1) << where.describe() << ": a page was touched by the allocator";
    p[bytes / 2] = 1;
    const int node = strata::node_of(p + bytes / 2);
    EXPECT_GE(node, 0) << where.describe();
    if (where.how() == memory_placement::kind::node && strata::numa_binding_available()) {
      EXPECT_EQ(node, where.node());
    }
    strata::numa_deallocate(p, bytes);
  }
}

TEST(Allocate, HugeRequestIsBadAllocCarryingNodeAndSize) {
  const std::size_t huge = std::size_t{1} << 60;
  const int node = first_node();
  try {
    (void)strata::numa_allocate(huge, memory_placement::on(strata::numa_node{node}));
    FAIL() << "2^60 bytes were granted";
  } catch (const strata::numa_bad_alloc& e) {
    EXPECT_EQ(e.size(), huge);
    EXPECT_EQ(e.node(), node);
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(huge) + " bytes on node " + std::to_string(node)), std::string::npos) << what;
  }
  std::bad_alloc* as_std = nullptr;
  try {
    (void)strata::numa_allocate(huge, memory_placement::interleaved());
  } catch (std::bad_alloc& e) {
    as_std = &e;
    EXPECT_NE(std::string(e.what()).find("interleaved"), std::string::npos);
  }
  EXPECT_NE(as_std, nullptr) << "numa_bad_alloc is a std::bad_alloc";
}

TEST(NodeOf, UnknownPointersAreMinusOne) {
  EXPECT_EQ(strata::node_of(nullptr), -1);
  int on_stack = 1;
  EXPECT_GE(strata::node_of(&on_stack), 0);
  const void* ptrs[3] = {nullptr, &on_stack, &on_stack};
  int out[3] = {7, 7, 7};
  strata::nodes_of(ptrs, 3, out);
  EXPECT_EQ(out[0], -1);
  EXPECT_GE(out[1], 0);
  EXPECT_EQ(out[1], out[2]);
}

TEST(Allocator, WorksInStandardContainers) {
  const std::int64_t before = total_in_use();
  {
    strata::numa_allocator<double> a{strata::numa_node{first_node()}};
    std::vector<double, strata::numa_allocator<double>> v(1 << 20, 0.5, a);
    double s = 0;
    for (double x : v) s += x;
    EXPECT_EQ(s, 0.5 * (1 << 20));
    if (strata::numa_binding_available()) {
      EXPECT_EQ(strata::node_of(v.data() + v.size() / 2), first_node());
    }

    std::list<int, strata::numa_allocator<int>> l(strata::numa_allocator<int>::interleaved());
    for (int i = 0; i < 10000; ++i) l.push_back(i);
    EXPECT_EQ(l.size(), 10000u);
    using pair_alloc = strata::numa_allocator<std::pair<const int, std::string>>;
    std::map<int, std::string, std::less<>, pair_alloc> m{pair_alloc::local()};
    for (int i = 0; i < 1000; ++i) m.emplace(i, std::string(100, 'x'));
    EXPECT_EQ(m.size(), 1000u);
    EXPECT_GT(total_in_use(), before);
  }
  EXPECT_EQ(total_in_use(), before);
}

TEST(Allocator, EqualityFollowsThePlacementAcrossRebinds) {
  strata::numa_allocator<double> a{strata::numa_node{first_node()}};
  strata::numa_allocator<double> b{strata::numa_node{first_node()}};
  strata::numa_allocator<char> rebound(a);
  EXPECT_TRUE(a == b);
  EXPECT_TRUE(a == rebound);
  EXPECT_EQ(rebound.placement(), a.placement());
  EXPECT_FALSE(a == strata::numa_allocator<double>::interleaved());
  EXPECT_FALSE(strata::numa_allocator<double>::local() == strata::numa_allocator<double>::interleaved());
}

// set_thread_node: only nodes this process may use; once set, local()
// placements of that thread go to that node's arena.
TEST(Placement, ThreadNodeHintTakesOnlyAllowedNodesAndSteersLocal) {
  std::thread t([] {
    EXPECT_FALSE(strata::set_thread_node(strata::numa_node{-1}));
    EXPECT_FALSE(strata::set_thread_node(strata::numa_node{1 << 20}));
    const int n = strata::numa_allowed_nodes().back();
    ASSERT_TRUE(strata::set_thread_node(strata::numa_node{n}));
    const std::string arena = "node " + std::to_string(n);
    const std::int64_t before = in_use(arena.c_str());
    void* p = strata::numa_allocate(4000, memory_placement::local());  // class 4096
    EXPECT_EQ(in_use(arena.c_str()) - before, 4096) << "local() of a thread on node " << n;
    strata::numa_deallocate(p, 4000);
    EXPECT_EQ(in_use(arena.c_str()), before);
  });
  t.join();
}

TEST(Stats, CountBytesPerArena) {
  const std::string node_arena = "node " + std::to_string(first_node());
  const std::int64_t node_before = in_use(node_arena.c_str());
  const std::int64_t il_before = in_use("interleaved");
  void* a = strata::numa_allocate(3 << 20, memory_placement::on(strata::numa_node{first_node()}));
  void* b = strata::numa_allocate(100, memory_placement::interleaved());  // class 128
  EXPECT_EQ(in_use(node_arena.c_str()) - node_before, 3 << 20);
  EXPECT_EQ(in_use("interleaved") - il_before, 128);
  const auto s = strata::numa_stats();
  EXPECT_EQ(s.binding, strata::numa_binding_available());
  ASSERT_NE(s.find_node(first_node()), nullptr);
  EXPECT_GE(s.find_node(first_node())->bytes_mapped, std::uint64_t{3} << 20);
  const auto j = strata::test::json_reader::parse(s.to_json());
  EXPECT_EQ(j["arenas"].size(), strata::numa_allowed_nodes().size() + 2);
  EXPECT_EQ(j["arenas"][std::size_t{0}]["arena"].str, "node " + std::to_string(strata::numa_allowed_nodes().front()));
  strata::numa_deallocate(a, 3 << 20);
  strata::numa_deallocate(b, 100);
  EXPECT_EQ(in_use(node_arena.c_str()), node_before);
  EXPECT_EQ(in_use("interleaved"), il_before);
}

TEST(Stats, ThreadExitKeepsItsCountsAndBlocks) {
  const std::int64_t before = total_in_use();
  std::vector<void*> blocks;
  std::thread t([&] {
    for (int i = 0; i < 5000; ++i) blocks.push_back(strata::numa_allocate(64, memory_placement::local()));
  });
  t.join();  // its cache is gone; its counts moved to the arena's totals
  EXPECT_EQ(total_in_use() - before, 5000 * 64);
  for (void* p : blocks) strata::numa_deallocate(p, 64);
  EXPECT_EQ(total_in_use(), before);
}

TEST(Stats, BlocksFreedByAnotherThreadAreReturned) {
  const std::int64_t before = total_in_use();
  const auto where = memory_placement::on(strata::numa_node{first_node()});
  for (int round = 0; round < 20; ++round) {
    std::vector<void*> blocks;
    std::thread producer([&] {
      for (int i = 0; i < 2000; ++i) blocks.push_back(strata::numa_allocate(16u << (i % 12), where));
    });
    producer.join();
    std::thread consumer([&] {
      for (std::size_t i = 0; i < blocks.size(); ++i) strata::numa_deallocate(blocks[i], 16u << (i % 12));
    });
    consumer.join();
  }
  EXPECT_EQ(total_in_use(), before);
}

// The runtime's own memory: each worker object, deque buffer and frame slab
// on its worker's node when pinned (the VM test checks this on 4 nodes).
TEST(Runtime, WorkerMemoryIsOnItsNode) {
  strata::runtime rt;  // this machine, pinned
  if (!rt.pinned()) GTEST_SKIP() << "workers are not pinned here";
  // Give every worker a frame slab.
  for (unsigned w = 0; w < rt.num_workers(); ++w) {
    rt.submit_on(strata::worker_id{w}, [] {
       strata::task_group g;
       g.run([] {});
       g.wait();
     }).get();
  }
  for (unsigned w = 0; w < rt.num_workers(); ++w) {
    const auto& worker = *rt.core().workers[w];
    EXPECT_EQ(worker.memory, memory_placement::on(strata::numa_node{rt.placement()[w].numa_os_index}));
    if (!strata::numa_binding_available()) continue;
    EXPECT_EQ(strata::node_of(&worker), rt.placement()[w].numa_os_index) << "worker " << w;
  }
}

TEST(Runtime, SyntheticMachineUsesPlainMemory) {
  strata::config c = strata::test::workers(4);
  c.topology = strata::topology::synthetic("pack:2 numa:2 core:1 pu:1");
  const std::int64_t unbound_before = in_use("unbound");
  strata::runtime rt(c);
  EXPECT_FALSE(rt.pinned());
  for (unsigned w = 0; w < rt.num_workers(); ++w) {
    EXPECT_EQ(rt.core().workers[w]->memory, memory_placement::unbound());
  }
  EXPECT_GT(in_use("unbound"), unbound_before) << "worker structures come from the unbound arena";
}

TEST(FirstTouch, ConstructsEveryElementWithTheOwnerMap) {
  strata::runtime rt(strata::test::workers(2));
  const std::size_t n = std::size_t{4} << 20;
  auto* a = static_cast<double*>(strata::numa_allocate(n * sizeof(double), memory_placement::unbound()));
  EXPECT_EQ(strata::node_of(a + n / 2), -1);
  strata::first_touch(rt, a, n, 2.5);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += a[i] != 2.5;
  EXPECT_EQ(wrong, 0u);
  // Every page now has a node (the VM test checks that it is the owner's).
  std::vector<const void*> pages;
  for (std::size_t i = 0; i < n; i += 512) pages.push_back(a + i);
  std::vector<int> nodes(pages.size());
  strata::nodes_of(pages.data(), pages.size(), nodes.data());
  for (int node : nodes) ASSERT_GE(node, 0);
  strata::first_touch(rt, std::span<double>(a, 0));  // empty: nothing happens
  strata::numa_deallocate(a, n * sizeof(double));
}

// A machine whose kernel refuses mbind (a container's seccomp profile does
// this): one warning, then plain memory, never a crash. A forked child
// installs a seccomp filter that fails mbind with EPERM before numa_alloc
// looks at the machine, and reports through a pipe.
namespace no_binding {

bool refuse_mbind() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, nr))),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(__NR_mbind), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

TEST(NoBinding, OneWarningThenPlainMemory) {
  int out[2], err[2];
  ASSERT_EQ(pipe(out), 0);
  ASSERT_EQ(pipe(err), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err[1], 2);
    close(out[0]);
    close(err[0]);
    std::string report;
    if (!refuse_mbind()) {
      report = "no seccomp";
    } else {
      report += strata::numa_binding_available() ? "binding " : "no-binding ";
      const std::size_t big = std::size_t{4} << 20;
      auto* a = static_cast<char*>(strata::numa_allocate(big, memory_placement::on(strata::numa_node{first_node()})));
      auto* b = static_cast<char*>(strata::numa_allocate(100, memory_placement::interleaved()));
      a[0] = 1;
      a[big - 1] = 2;
      b[99] = 3;
      report += (a[0] + a[big - 1] + b[99] == 6) ? "memory-ok " : "memory-bad ";
      strata::runtime rt(strata::test::workers(2));
      report += rt.submit([] { return 41; }).get() == 41 ? "runtime-ok" : "runtime-bad";
      strata::numa_deallocate(a, big);
      strata::numa_deallocate(b, 100);
    }
    (void)!write(out[1], report.data(), report.size());
    _exit(0);
  }
  close(out[1]);
  close(err[1]);
  auto slurp = [](int fd) {
    std::string s;
    char buf[512];
    for (ssize_t k; (k = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(k));
    close(fd);
    return s;
  };
  const std::string report = slurp(out[0]);
  const std::string errors = slurp(err[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child crashed; stderr: " << errors;
  if (report == "no seccomp") GTEST_SKIP() << "seccomp filters are not available here";
  // "binding" when this process had probed the machine before the fork (the
  // child inherits the answer; its allocations then meet the refusal).
  EXPECT_TRUE(report == "no-binding memory-ok runtime-ok" || report == "binding memory-ok runtime-ok")
      << report << "; stderr: " << errors;
  const std::string warning = "NUMA binding is not available here (mbind refused: Operation not permitted)";
  const auto first = errors.find(warning);
  EXPECT_NE(first, std::string::npos) << errors;
  EXPECT_EQ(errors.find(warning, first + 1), std::string::npos) << "warned more than once: " << errors;
}

}  // namespace no_binding

}  // namespace
