// Runs inside the QEMU NUMA machine (run_in_vm.sh): 2 sockets x 4 CPUs,
// 4 NUMA nodes of two CPUs, distances 10 / 12 within a socket / 32 across.
// On any other machine (no --inside-vm) every test is skipped.
#include <gtest/gtest.h>
#include <sched.h>
#include <strata/strata.hpp>

#include <cstring>
#include <thread>
#include <vector>

namespace {

bool g_inside_vm = false;

#define STRATA_REQUIRE_VM() \
  if (!g_inside_vm) GTEST_SKIP() << "runs only inside the NUMA VM (tests/numa_vm/run_in_vm.sh ... --inside-vm)"

// The same machine as hwloc shows it inside the VM, described synthetically.
const char* const k_same_machine = "pack:2 numa:2 l3:1 core:2 pu:1";

TEST(NumaVm, DiscoveryFindsTheMachine) {
  STRATA_REQUIRE_VM();
  const auto t = strata::topology::discover();
  EXPECT_TRUE(t.is_this_system());
  EXPECT_EQ(t.num_packages(), 2u);
  EXPECT_EQ(t.num_numa_nodes(), 4u);
  EXPECT_EQ(t.num_pus(), 8u);
  EXPECT_EQ(t.num_cores(), 8u);
  EXPECT_TRUE(t.distances_from_hwloc());
  const int expect[4][4] = {{10, 12, 32, 32}, {12, 10, 32, 32}, {32, 32, 10, 12}, {32, 32, 12, 10}};
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) EXPECT_EQ(t.numa_distance(a, b), expect[a][b]) << a << "," << b;
  }
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(t.numa_nodes()[static_cast<std::size_t>(n)].cores, (std::vector<int>{2 * n, 2 * n + 1}));
  }
  std::printf("%s", t.describe().c_str());
}

TEST(NumaVm, PlacementAndTiersEqualTheSyntheticMachine) {
  STRATA_REQUIRE_VM();
  for (auto bind : {strata::bind_policy::close, strata::bind_policy::spread}) {
    for (unsigned n : {2u, 4u, 8u}) {
      strata::config real, synth;
      real.workers = synth.workers = n;
      real.bind = synth.bind = bind;
      real.topology = strata::topology::discover();
      synth.topology = strata::topology::synthetic(k_same_machine);
      const auto a = strata::placement_plan::compute(real);
      const auto b = strata::placement_plan::compute(synth);
      ASSERT_EQ(a.num_workers(), b.num_workers());
      for (unsigned w = 0; w < n; ++w) {
        const auto& x = a.workers()[w];
        const auto& y = b.workers()[w];
        EXPECT_EQ(x.pu_os_index, y.pu_os_index);
        EXPECT_EQ(x.core, y.core);
        EXPECT_EQ(x.numa_node, y.numa_node);
        EXPECT_EQ(x.package, y.package);
        ASSERT_EQ(a.tiers_of(w).size(), b.tiers_of(w).size()) << "worker " << w;
        for (std::size_t i = 0; i < a.tiers_of(w).size(); ++i) {
          EXPECT_EQ(a.tiers_of(w)[i].workers, b.tiers_of(w)[i].workers);
          EXPECT_EQ(a.tiers_of(w)[i].kind, b.tiers_of(w)[i].kind);
        }
      }
    }
  }
  // With the real distances the package tier is at 12 and the remote one at 32.
  strata::config c;
  c.topology = strata::topology::discover();
  const auto p = strata::placement_plan::compute(c);
  ASSERT_EQ(p.tiers_of(0).size(), 3u);
  EXPECT_EQ(p.tiers_of(0)[1].distance, 12);
  EXPECT_EQ(p.tiers_of(0)[2].kind, strata::tier_kind::remote);
  EXPECT_EQ(p.tiers_of(0)[2].distance, 32);
  std::printf("%s", p.tiers_table().c_str());
}

TEST(NumaVm, BindingIsReal) {
  STRATA_REQUIRE_VM();
  const auto t = strata::topology::discover();
  for (const auto& pu : t.pus()) {
    int seen = -1;
    std::thread th([&] {
      t.bind_current_thread(pu.os_index);
      sched_yield();
      seen = sched_getcpu();
    });
    th.join();
    EXPECT_EQ(seen, pu.os_index);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--inside-vm") == 0) g_inside_vm = true;
  }
  return RUN_ALL_TESTS();
}
