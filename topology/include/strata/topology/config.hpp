// strata::placement_config: how many workers, where they go, on which
// machine. It is the placement part of strata::config (the one struct users
// fill, <strata/runtime/config.hpp>), which adds the runtime's settings.
//
//   strata::config c = strata::config::from_env();  // STRATA_* variables, validated
//   c.workers = 8;                                   // default: one per allowed core
//   c.places = "numa";                               // threads|cores|l3|numa|sockets|explicit list
//   c.bind = strata::bind_policy::spread;
//
// Every value is validated: a bad one throws strata::config_error naming the
// variable, the value and the accepted forms. Nothing falls back silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <strata/topology/topology.hpp>

namespace strata {

enum class bind_policy { close, spread, none };
const char* to_string(bind_policy b) noexcept;

struct placement_config {
  // Number of workers. Unset: one per usable core of the places; under SLURM
  // (this machine only) at most SLURM_CPUS_PER_TASK.
  std::optional<unsigned> workers;
  // threads|cores|l3|numa|sockets, optionally with a count ("cores(4)"), or an
  // OpenMP-style list of OS PU numbers: "{0:4}:2:4", "{0,1},{2,3}", "0-3,8-11".
  std::string places = "cores";
  bind_policy bind = bind_policy::close;
  // The machine; unset means topology::discover().
  std::optional<strata::topology> topology;
  // Set: one worker and a fixed, reproducible schedule (see the runtime).
  std::optional<std::uint64_t> deterministic_seed;
  // Allow more workers than PUs (they then share PUs).
  bool oversubscribe = false;
  // Print the placement table when a runtime starts (like OMP_DISPLAY_AFFINITY).
  bool display_affinity = false;
  // Reads STRATA_NUM_WORKERS, STRATA_PLACES, STRATA_PROC_BIND, STRATA_TOPOLOGY,
  // STRATA_DISPLAY_AFFINITY, STRATA_OVERSUBSCRIBE, STRATA_DETERMINISTIC_SEED.
  // Unset variables keep the defaults above; set ones must be valid.
  static placement_config from_env();
};

namespace detail {
// A yes/no variable: 1, true, yes, on or 0, false, no, off (any case);
// anything else is a config_error naming the variable and what it accepts.
bool parse_flag(const char* name, const std::string& value);
}  // namespace detail

}  // namespace strata
