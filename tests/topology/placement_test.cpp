// Exact worker-to-PU maps (close and spread) and exact steal tiers on
// machines we do not have: synthetic 1-, 2- and 4-socket machines and an
// asymmetric XML machine with a disallowed core.
#include <gtest/gtest.h>
#include <strata/topology/placement.hpp>

#include <string>
#include <vector>

#include "env_guard.hpp"
#include "json_reader.hpp"

namespace {

using strata::bind_policy;
using config = strata::placement_config;
using strata::config_error;
using strata::placement_plan;
using strata::tier_kind;
using strata::topology;
using ids = std::vector<unsigned>;

config on(const topology& t, std::optional<unsigned> workers = std::nullopt, bind_policy b = bind_policy::close,
          std::string places = "cores") {
  config c;
  c.topology = t;
  c.workers = workers;
  c.bind = b;
  c.places = std::move(places);
  return c;
}

std::vector<int> pus_of(const placement_plan& p) {
  std::vector<int> v;
  for (const auto& w : p.workers()) v.push_back(w.pu_os_index);
  return v;
}

std::vector<ids> tier_ids(const placement_plan& p, unsigned w) {
  std::vector<ids> v;
  for (const auto& t : p.tiers_of(w)) v.push_back(t.workers);
  return v;
}

ids range(unsigned a, unsigned b) {  // [a, b]
  ids v;
  for (unsigned i = a; i <= b; ++i) v.push_back(i);
  return v;
}

const topology& two_socket() {
  static const topology t = topology::synthetic("pack:2 numa:2 l3:1 core:4 pu:2");
  return t;
}

TEST(ThisMachineShape, OnePackageTwoCores) {
  const auto p = placement_plan::compute(on(topology::synthetic("pack:1 l3:1 core:2 pu:1")));
  EXPECT_EQ(pus_of(p), (std::vector<int>{0, 1}));
  EXPECT_EQ(tier_ids(p, 0), (std::vector<ids>{{1}}));
  EXPECT_EQ(p.tiers_of(0)[0].kind, tier_kind::l3);
  EXPECT_EQ(tier_ids(p, 1), (std::vector<ids>{{0}}));
  EXPECT_FALSE(p.pins());
  // Without an L3 the one tier is the NUMA node.
  const auto q = placement_plan::compute(on(topology::synthetic("pack:1 core:2 pu:1")));
  EXPECT_EQ(q.tiers_of(0)[0].kind, tier_kind::numa);
  EXPECT_EQ(tier_ids(q, 0), (std::vector<ids>{{1}}));
  // One worker has no victims.
  EXPECT_TRUE(placement_plan::compute(on(topology::synthetic("pack:1 core:2 pu:1"), 1)).tiers_of(0).empty());
}

TEST(TwoSocket, DefaultIsOneWorkerPerCoreClose) {
  const auto p = placement_plan::compute(on(two_socket()));
  ASSERT_EQ(p.num_workers(), 16u);
  std::vector<int> expect;
  for (int i = 0; i < 16; ++i) expect.push_back(2 * i);  // first PU of each core, SMT siblings skipped
  EXPECT_EQ(pus_of(p), expect);
  EXPECT_EQ(tier_ids(p, 0), (std::vector<ids>{{1, 2, 3}, range(4, 7), range(8, 15)}));
  EXPECT_EQ(p.tiers_of(0)[0].kind, tier_kind::l3);
  EXPECT_EQ(p.tiers_of(0)[1].kind, tier_kind::package);
  EXPECT_EQ(p.tiers_of(0)[2].kind, tier_kind::remote);
  EXPECT_EQ(p.tiers_of(0)[2].distance, 20);
  EXPECT_EQ(tier_ids(p, 9), (std::vector<ids>{{8, 10, 11}, range(12, 15), range(0, 7)}));
  EXPECT_EQ(p.workers()[9].numa_node, 2);
  EXPECT_EQ(p.workers()[9].package, 1);
  EXPECT_EQ(p.workers()[9].core, 9);
}

TEST(TwoSocket, CloseAndSpreadFourWorkers) {
  EXPECT_EQ(pus_of(placement_plan::compute(on(two_socket(), 4))), (std::vector<int>{0, 2, 4, 6}));
  const auto s = placement_plan::compute(on(two_socket(), 4, bind_policy::spread));
  EXPECT_EQ(pus_of(s), (std::vector<int>{0, 8, 16, 24}));  // one per NUMA node
  EXPECT_EQ(tier_ids(s, 0), (std::vector<ids>{{1}, {2, 3}}));
  EXPECT_EQ(s.tiers_of(0)[0].kind, tier_kind::package);
  EXPECT_EQ(s.tiers_of(0)[1].kind, tier_kind::remote);
}

TEST(TwoSocket, SmtSiblingsOnlyBeyondOneWorkerPerCore) {
  // 32 workers on 16 core places (more workers than places): OpenMP's close
  // puts consecutive workers on one place, two per core here.
  const auto p = placement_plan::compute(on(two_socket(), 32));
  const auto pus = pus_of(p);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(pus[static_cast<std::size_t>(i)], i);
  // Worker 0 shares its core with worker 1: that is its nearest tier.
  EXPECT_EQ(tier_ids(p, 0)[0], (ids{1}));
  EXPECT_EQ(p.tiers_of(0)[0].kind, tier_kind::core);
  EXPECT_EQ(tier_ids(p, 0)[1], range(2, 7));
  // 20 workers: every core has one before any has two.
  const auto q = pus_of(placement_plan::compute(on(two_socket(), 20)));
  std::vector<int> per_core(16, 0);
  for (int pu : q) ++per_core[static_cast<std::size_t>(pu / 2)];
  for (int n : per_core) EXPECT_GE(n, 1);
}

TEST(TwoSocket, OversubscriptionNeedsTheSetting) {
  try {
    (void)placement_plan::compute(on(two_socket(), 33));
    FAIL() << "33 workers on 32 PUs without oversubscribe";
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_OVERSUBSCRIBE"), std::string::npos) << e.what();
  }
  auto c = on(two_socket(), 33);
  c.oversubscribe = true;
  const auto p = placement_plan::compute(c);
  std::vector<int> per_pu(32, 0);
  for (int pu : pus_of(p)) ++per_pu[static_cast<std::size_t>(pu)];
  for (int n : per_pu) EXPECT_GE(n, 1) << "every PU has a worker before one has two";
}

TEST(TwoSocket, NumaPlacesSpread) {
  const auto p = placement_plan::compute(on(two_socket(), 8, bind_policy::spread, "numa"));
  EXPECT_EQ(pus_of(p), (std::vector<int>{0, 2, 8, 10, 16, 18, 24, 26}));
  // 6 workers on 4 places: floor(i * 4 / 6), two on nodes 0 and 2.
  const auto c = placement_plan::compute(on(two_socket(), 6, bind_policy::close, "numa"));
  EXPECT_EQ(pus_of(c), (std::vector<int>{0, 2, 8, 16, 18, 24}));
  EXPECT_EQ(placement_plan::compute(on(two_socket(), std::nullopt, bind_policy::close, "numa(2)")).num_workers(), 8u);
}

// OpenMP place semantics (OMP_PLACES, OMP_PROC_BIND) over interval, list
// and abstract places, close and spread, fewer and more workers than places.
TEST(TwoSocket, OpenMpPlaceSemantics) {
  const auto pus = [](unsigned n, bind_policy b, const char* places) {
    return pus_of(placement_plan::compute(on(two_socket(), n, b, places)));
  };
  using v = std::vector<int>;
  // Four places {0..3}, {8..11}, {16..19}, {24..27}: close with no more
  // workers than places puts one worker in each place.
  EXPECT_EQ(pus(4, bind_policy::close, "{0:4}:4:8"), (v{0, 8, 16, 24}));
  EXPECT_EQ(pus(2, bind_policy::close, "{0:4}:4:8"), (v{0, 8}));
  EXPECT_EQ(pus(2, bind_policy::spread, "{0:4}:4:8"), (v{0, 16}));
  // More workers than places: consecutive workers share a place, a core of
  // its own each (PUs 0 and 2 are cores 0 and 1), then the siblings.
  EXPECT_EQ(pus(8, bind_policy::close, "{0:4}:4:8"), (v{0, 2, 8, 10, 16, 18, 24, 26}));
  EXPECT_EQ(pus(12, bind_policy::close, "{0:4}:4:8"), (v{0, 2, 1, 8, 10, 9, 16, 18, 17, 24, 26, 25}));
  EXPECT_EQ(pus(8, bind_policy::spread, "{0:4}:4:8"), pus(8, bind_policy::close, "{0:4}:4:8"));
  // Lists: {0,1},{2,3} are cores 0 and 1.
  EXPECT_EQ(pus(2, bind_policy::close, "{0,1},{2,3}"), (v{0, 2}));
  EXPECT_EQ(pus(4, bind_policy::close, "{0,1},{2,3}"), (v{0, 1, 2, 3}));
  EXPECT_EQ(pus(2, bind_policy::close, "{0},{1},{2},{3}"), (v{0, 2})) << "no SMT pair while core 1 is free";
  EXPECT_EQ(pus(3, bind_policy::close, "{0},{1},{2},{3}"), (v{0, 2, 1}));
  // Abstract names.
  EXPECT_EQ(pus(2, bind_policy::close, "sockets"), (v{0, 16}));
  EXPECT_EQ(pus(3, bind_policy::close, "sockets"), (v{0, 2, 16}));
  EXPECT_EQ(pus(4, bind_policy::spread, "cores"), (v{0, 8, 16, 24}));
  EXPECT_EQ(pus(3, bind_policy::close, "numa(2)"), (v{0, 2, 8}));
  EXPECT_EQ(pus(2, bind_policy::spread, "threads"), (v{0, 16}));
}

// Every other worker appears in exactly one tier of each worker, on shapes
// where the NUMA node spans packages (an older 4-socket server with one
// memory controller hub) or sits at the root, as well as nested ones.
TEST(Tiers, EveryOtherWorkerInExactlyOneTier) {
  for (const char* shape : {"numa:1 pack:2 core:2 pu:1", "pack:2 core:2 pu:1", "numa:1 pack:4 l3:1 core:2 pu:2",
                            "pack:2 numa:2 l3:1 core:4 pu:2", "pack:1 l3:2 core:2 pu:2"}) {
    const auto p = placement_plan::compute(on(topology::synthetic(shape)));
    for (unsigned w = 0; w < p.num_workers(); ++w) {
      std::vector<int> seen(p.num_workers(), 0);
      for (const auto& tier : p.tiers_of(w)) {
        for (unsigned v : tier.workers) ++seen[v];
      }
      for (unsigned v = 0; v < p.num_workers(); ++v) {
        EXPECT_EQ(seen[v], v == w ? 0 : 1) << shape << ": worker " << v << " in the tiers of worker " << w;
      }
    }
  }
}

TEST(TwoSocket, ThreadsAndExplicitPlaces) {
  // One PU per place: the places that bring a new core come first.
  EXPECT_EQ(pus_of(placement_plan::compute(on(two_socket(), 4, bind_policy::close, "threads"))),
            (std::vector<int>{0, 2, 4, 6}));
  // Two places of two cores each, 8 workers: four per place, a core each
  // before the siblings.
  const auto e = placement_plan::compute(on(two_socket(), 8, bind_policy::close, "{0:4}:2:4"));
  EXPECT_EQ(pus_of(e), (std::vector<int>{0, 2, 1, 3, 4, 6, 5, 7}));
  EXPECT_EQ(tier_ids(e, 0)[0], (ids{2})) << "PUs 0 and 1 share core 0";
  EXPECT_EQ(placement_plan::compute(on(two_socket(), std::nullopt, bind_policy::close, "{0:4}:2:4")).num_workers(),
            4u) << "default: one worker per core of the places";
  EXPECT_EQ(pus_of(placement_plan::compute(on(two_socket(), std::nullopt, bind_policy::close, "0-3,8-11"))),
            (std::vector<int>{0, 2, 8, 10, 1, 3, 9, 11}));
  EXPECT_EQ(pus_of(placement_plan::compute(on(two_socket(), 2, bind_policy::spread, "{0},{8},{16},{24}"))),
            (std::vector<int>{0, 16}));
  EXPECT_THROW((void)placement_plan::compute(on(two_socket(), std::nullopt, bind_policy::close, "{0,99}")),
               config_error);
  EXPECT_THROW((void)placement_plan::compute(on(two_socket(), std::nullopt, bind_policy::close, "cores(17)")),
               config_error);
}

TEST(FourSocket, TiersByPackageAndDistance) {
  const auto t = topology::synthetic("pack:4 numa:1 core:8 pu:1");
  const auto p = placement_plan::compute(on(t));
  ASSERT_EQ(p.num_workers(), 32u);
  for (unsigned i = 0; i < 32; ++i) EXPECT_EQ(p.workers()[i].pu_os_index, static_cast<int>(i));
  EXPECT_EQ(tier_ids(p, 0), (std::vector<ids>{range(1, 7), range(8, 31)}));
  EXPECT_EQ(p.tiers_of(0)[0].kind, tier_kind::numa);
  EXPECT_EQ(tier_ids(p, 20), (std::vector<ids>{{16, 17, 18, 19, 21, 22, 23}, [] {
                                                 ids v = range(0, 15);
                                                 for (unsigned i = 24; i < 32; ++i) v.push_back(i);
                                                 return v;
                                               }()}));
  const auto s = placement_plan::compute(on(t, 4, bind_policy::spread));
  EXPECT_EQ(pus_of(s), (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(tier_ids(s, 2), (std::vector<ids>{{0, 1, 3}}));
}

TEST(Xml, AsymmetricWithDisallowedCore) {
  const auto t = topology::from_xml(STRATA_TEST_DATA_DIR "/asymmetric.xml");
  const auto p = placement_plan::compute(on(t));
  EXPECT_EQ(pus_of(p), (std::vector<int>{0, 4, 6, 8, 10}));
  EXPECT_EQ(tier_ids(p, 0), (std::vector<ids>{{1}, {2, 3, 4}}));
  EXPECT_EQ(p.tiers_of(0)[1].distance, 21);
  EXPECT_EQ(tier_ids(p, 3), (std::vector<ids>{{2, 4}, {0, 1}}));
  EXPECT_EQ(pus_of(placement_plan::compute(on(t, 2, bind_policy::spread))), (std::vector<int>{0, 6}));
  EXPECT_EQ(pus_of(placement_plan::compute(on(t, 3, bind_policy::close, "sockets"))), (std::vector<int>{0, 4, 6}));
  EXPECT_EQ(pus_of(placement_plan::compute(on(t, 4, bind_policy::spread, "sockets"))),
            (std::vector<int>{0, 4, 6, 8}));
  // PU 2 belongs to the disallowed core.
  try {
    (void)placement_plan::compute(on(t, std::nullopt, bind_policy::close, "{2}"));
    FAIL();
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("PU 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)placement_plan::compute(on(t, 11)), config_error);
}

TEST(Deterministic, OneWorker) {
  auto c = on(two_socket());
  c.deterministic_seed = 42;
  EXPECT_EQ(placement_plan::compute(c).num_workers(), 1u);
  c.workers = 4;
  EXPECT_THROW((void)placement_plan::compute(c), config_error);
}

TEST(Json, PlacementAndTiers) {
  const auto p = placement_plan::compute(on(two_socket()));
  const auto j = strata::test::json_reader::parse(p.to_json());
  EXPECT_EQ(j["topology"]["numa_nodes"].size(), 4u);
  ASSERT_EQ(j["placement"].size(), 16u);
  EXPECT_EQ(j["placement"][9]["pu"].as_int(), 18);
  EXPECT_EQ(j["placement"][9]["numa_node"].as_int(), 2);
  EXPECT_EQ(j["tiers"][0][0].ints(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(j["tiers"][0][2].size(), 8u);
}

TEST(Slurm, CpusPerTaskLimitsTheDefaultOnThisSystem) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  const auto all = placement_plan::compute(config{});
  g.set("SLURM_CPUS_PER_TASK", "1");
  EXPECT_EQ(placement_plan::compute(config{}).num_workers(), 1u);
  // An explicit count wins; a synthetic machine is not the SLURM allocation.
  config explicit_count;
  explicit_count.workers = static_cast<unsigned>(all.num_workers());
  EXPECT_EQ(placement_plan::compute(explicit_count).num_workers(), all.num_workers());
  EXPECT_EQ(placement_plan::compute(on(two_socket())).num_workers(), 16u);
  g.set("SLURM_CPUS_PER_TASK", "1000");
  EXPECT_EQ(placement_plan::compute(config{}).num_workers(), all.num_workers());
  g.set("SLURM_CPUS_PER_TASK", "two");
  try {
    (void)placement_plan::compute(config{});
    FAIL();
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_CPUS_PER_TASK='two'"), std::string::npos) << e.what();
  }
}

}  // namespace
