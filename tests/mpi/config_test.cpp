// strata::mpi::config: every STRATA_MPI_* variable is validated, and a bad
// value is a config_error naming the variable, the value and what is
// accepted (no MPI needed).
#include <gtest/gtest.h>

#include <string>

#include <strata/mpi.hpp>
#include <strata/topology/error.hpp>

#include "env_guard.hpp"

namespace {

using strata::config_error;
using strata::mpi::config;

std::string error_of(const char* name, const char* value) {
  strata::test::env_guard g;
  g.set(name, value);
  try {
    (void)config::from_env();
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

TEST(MpiConfig, GoodValuesAreRead) {
  strata::test::env_guard g;
  g.set("STRATA_MPI_MODE", "latency")
      .set("STRATA_MPI_PROGRESS", "caller")
      .set("STRATA_MPI_BUFFER_BYTES", "16384")
      .set("STRATA_MPI_FLUSH_US", "0")
      .set("STRATA_MPI_RECEIVES", "16")
      .set("STRATA_MPI_CRC", "1")
      .set("STRATA_MPI_FAST_APPEND", "0")
      .set("STRATA_MPI_THREAD_LEVEL", "serialized")
      .set("STRATA_MPI_HEARTBEAT_MS", "100")
      .set("STRATA_MPI_DEADLINE_MS", "0")
      .set("STRATA_MPI_LOOKUP_MS", "250");
  const config c = config::from_env();
  EXPECT_EQ(c.mode, strata::mpi::send_mode::latency);
  EXPECT_EQ(c.progress, strata::mpi::progress_mode::caller);
  EXPECT_EQ(c.buffer_bytes, 16384u);
  EXPECT_EQ(c.flush_delay_us, 0u);
  EXPECT_EQ(c.receives, 16u);
  EXPECT_TRUE(c.crc);
  EXPECT_FALSE(c.fast_append);
  EXPECT_EQ(c.init_level, strata::mpi::thread_level::serialized);
  EXPECT_EQ(c.heartbeat_ms, 100u);
  EXPECT_EQ(c.deadline_ms, 0u);
  EXPECT_TRUE(c.deadline_set);
  EXPECT_EQ(c.lookup_ms, 250u);
  EXPECT_EQ(c.comm_worker, config::last_worker) << "unset: the runtime's last worker";
}

TEST(MpiConfig, TheCommWorkerIsRead) {
  strata::test::env_guard g;
  g.set("STRATA_MPI_PROGRESS", "worker").set("STRATA_MPI_COMM_WORKER", "3");
  const config c = config::from_env();
  EXPECT_EQ(c.progress, strata::mpi::progress_mode::worker);
  EXPECT_EQ(c.comm_worker, 3u);
}

TEST(MpiConfig, BadValuesNameTheVariableAndWhatIsAccepted) {
  struct bad {
    const char* name;
    const char* value;
    const char* accepted;
  };
  for (const bad& b : {bad{"STRATA_MPI_MODE", "fast", "throughput, latency"},
                       bad{"STRATA_MPI_PROGRESS", "poll", "auto, thread, worker, caller"},
                       bad{"STRATA_MPI_COMM_WORKER", "last", "0 .. 65535"},
                       bad{"STRATA_MPI_COMM_WORKER", "70000", "0 .. 65535"},
                       bad{"STRATA_MPI_THREAD_LEVEL", "single", "funneled, serialized, multiple"},
                       bad{"STRATA_MPI_BUFFER_BYTES", "1024", "4096 .. 4194304"},
                       bad{"STRATA_MPI_BUFFER_BYTES", "64k", "an integer"},
                       bad{"STRATA_MPI_RECEIVES", "1", "2 .. 256"},
                       bad{"STRATA_MPI_RECEIVES", "-3", "an integer"},
                       bad{"STRATA_MPI_CRC", "yes", "0 .. 1"},
                       bad{"STRATA_MPI_FAST_APPEND", "2", "0 .. 1"},
                       bad{"STRATA_MPI_FLUSH_US", "", ""},
                       bad{"STRATA_MPI_HEARTBEAT_MS", "5", "10 .. 600000"},
                       bad{"STRATA_MPI_DEADLINE_MS", "100", "two heartbeats"},
                       bad{"STRATA_MPI_LOOKUP_MS", "soon", "0 .. 86400000"}}) {
    const std::string e = error_of(b.name, b.value);
    if (*b.value == '\0') {
      EXPECT_EQ(e, "") << "an empty variable is unset";
      continue;
    }
    EXPECT_NE(e.find(b.name), std::string::npos) << b.name << "=" << b.value << ": " << e;
    EXPECT_NE(e.find(b.accepted), std::string::npos) << b.name << "=" << b.value << ": " << e;
  }
}

TEST(MpiConfig, FieldsOutOfRangeAreRefused) {
  config c;
  c.buffer_bytes = 100;
  EXPECT_THROW(c.validate(), config_error);
  c = config{};
  c.max_pending_bytes = c.buffer_bytes;
  EXPECT_THROW(c.validate(), config_error);
  c = config{};
  c.receives = 1000;
  EXPECT_THROW(c.validate(), config_error);
  c = config{};
  c.init_level = strata::mpi::thread_level::single;
  EXPECT_THROW(c.validate(), config_error);
  EXPECT_NO_THROW(config{}.validate());
}

}  // namespace
