// config::from_env(): good values land in the config, every bad value is a
// config_error naming the variable, the value and what is accepted.
#include <gtest/gtest.h>
#include <strata/topology/config.hpp>
#include <strata/topology/placement.hpp>

#include <string>

#include "param_name.hpp"

#include "env_guard.hpp"

namespace {

using config = strata::placement_config;
using strata::config_error;

TEST(ConfigEnv, DefaultsWhenUnset) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  const config c = config::from_env();
  EXPECT_FALSE(c.workers.has_value());
  EXPECT_EQ(c.places, "cores");
  EXPECT_EQ(c.bind, strata::bind_policy::close);
  EXPECT_FALSE(c.topology.has_value());
  EXPECT_FALSE(c.deterministic_seed.has_value());
  EXPECT_FALSE(c.oversubscribe);
  EXPECT_FALSE(c.display_affinity);
}

TEST(ConfigEnv, GoodValues) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  g.set("STRATA_NUM_WORKERS", "8")
      .set("STRATA_PLACES", "{0:4}:2:4")
      .set("STRATA_PROC_BIND", "Spread")
      .set("STRATA_TOPOLOGY", "pack:2 numa:2 l3:1 core:4 pu:2")
      .set("STRATA_DISPLAY_AFFINITY", "1")
      .set("STRATA_OVERSUBSCRIBE", "true")
      .set("STRATA_DETERMINISTIC_SEED", "42");
  const config c = config::from_env();
  EXPECT_EQ(c.workers, 8u);
  EXPECT_EQ(c.places, "{0:4}:2:4");
  EXPECT_EQ(c.bind, strata::bind_policy::spread);
  ASSERT_TRUE(c.topology.has_value());
  EXPECT_EQ(c.topology->num_cores(), 16u);
  EXPECT_TRUE(c.display_affinity);
  EXPECT_TRUE(c.oversubscribe);
  EXPECT_EQ(c.deterministic_seed, 42u);
  g.set("STRATA_TOPOLOGY", STRATA_TEST_DATA_DIR "/asymmetric.xml");
  EXPECT_EQ(config::from_env().topology->num_cores(), 5u);
}

struct bad_env {
  const char* variable;
  const char* value;
  const char* accepted;  // a fragment of the accepted forms the message must name
};

void PrintTo(const bad_env& c, std::ostream* os) { *os << c.variable << "='" << c.value << "'"; }

class ConfigEnvBad : public ::testing::TestWithParam<bad_env> {};

TEST_P(ConfigEnvBad, NamesVariableValueAndAcceptedForms) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  g.set(GetParam().variable, GetParam().value);
  try {
    (void)config::from_env();
    FAIL() << GetParam().variable << "='" << GetParam().value << "' was accepted";
  } catch (const config_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(std::string(GetParam().variable) + "='" + GetParam().value + "'"), std::string::npos) << m;
    EXPECT_NE(m.find(GetParam().accepted), std::string::npos) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ConfigEnvBad,
    ::testing::Values(
        bad_env{"STRATA_NUM_WORKERS", "0", "from 1 to 4096"}, bad_env{"STRATA_NUM_WORKERS", "-1", "from 1 to 4096"},
        bad_env{"STRATA_NUM_WORKERS", "4x", "from 1 to 4096"}, bad_env{"STRATA_NUM_WORKERS", "", "from 1 to 4096"},
        bad_env{"STRATA_NUM_WORKERS", "99999999999999999999", "from 1 to 4096"},
        bad_env{"STRATA_NUM_WORKERS", "4097", "from 1 to 4096"}, bad_env{"STRATA_NUM_WORKERS", " 4", "whole number"},
        bad_env{"STRATA_NUM_WORKERS", "0x10", "whole number"}, bad_env{"STRATA_NUM_WORKERS", "2.5", "whole number"},
        bad_env{"STRATA_PROC_BIND", "tight", "close, spread, none"},
        bad_env{"STRATA_PROC_BIND", "", "close, spread, none"},
        bad_env{"STRATA_PROC_BIND", "close,spread", "close, spread, none"},
        bad_env{"STRATA_PLACES", "{0:4", "accepted: threads|cores|l3|numa|sockets"},
        bad_env{"STRATA_PLACES", "", "accepted: threads|cores|l3|numa|sockets"},
        bad_env{"STRATA_PLACES", "3-1", "accepted: threads|cores|l3|numa|sockets"},
        bad_env{"STRATA_PLACES", "hyperthreads", "accepted: threads|cores|l3|numa|sockets"},
        bad_env{"STRATA_TOPOLOGY", "pack:x", "synthetic description"},
        bad_env{"STRATA_TOPOLOGY", "", "synthetic description"},
        bad_env{"STRATA_TOPOLOGY", "no/such/machine.xml", "XML file exported by lstopo"},
        bad_env{"STRATA_TOPOLOGY", STRATA_TEST_DATA_DIR "/malformed.xml", "XML file exported by lstopo"},
        bad_env{"STRATA_TOPOLOGY", "pack:2 core:2 pu:0", "synthetic description"},
        bad_env{"STRATA_DISPLAY_AFFINITY", "2", "accepted: 1, true"},
        bad_env{"STRATA_DISPLAY_AFFINITY", "", "accepted: 1, true"},
        bad_env{"STRATA_OVERSUBSCRIBE", "yes please", "accepted: 1, true"},
        bad_env{"STRATA_DETERMINISTIC_SEED", "-5", "whole number"},
        bad_env{"STRATA_DETERMINISTIC_SEED", "1e3", "whole number"},
        bad_env{"STRATA_DETERMINISTIC_SEED", "18446744073709551616", "out of range"}),
    strata::test::case_name{});

// Errors that need the machine: PUs out of range, too many workers.
TEST(ConfigEnv, MachineDependentErrorsNameTheSetting) {
  strata::test::env_guard g;
  strata::test::clear_strata_env(g);
  g.set("STRATA_TOPOLOGY", "pack:1 core:2 pu:1").set("STRATA_PLACES", "{0},{7}");
  try {
    (void)strata::placement_plan::compute(config::from_env());
    FAIL();
  } catch (const config_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("STRATA_PLACES"), std::string::npos) << m;
    EXPECT_NE(m.find("PU 7"), std::string::npos) << m;
    EXPECT_NE(m.find("usable PUs: 0-1"), std::string::npos) << m;
  }
  g.unset("STRATA_PLACES").set("STRATA_NUM_WORKERS", "3");
  try {
    (void)strata::placement_plan::compute(config::from_env());
    FAIL();
  } catch (const config_error& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_OVERSUBSCRIBE=1"), std::string::npos) << e.what();
  }
  g.set("STRATA_OVERSUBSCRIBE", "1");
  EXPECT_EQ(strata::placement_plan::compute(config::from_env()).num_workers(), 3u);
  g.set("STRATA_PLACES", "l3");
  EXPECT_THROW((void)strata::placement_plan::compute(config::from_env()), config_error) << "no L3 in this machine";
}

}  // namespace
