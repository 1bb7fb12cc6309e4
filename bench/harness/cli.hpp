// Command line of strata-bench:
//
//   strata-bench [--filter REGEX] [--threads LIST] [--runtimes LIST] [--reps N]
//                [--json FILE] [--plot DIR] [--list]
//   strata-bench --placement-report [--n N] [--threads LIST] [--json FILE]
//   strata-bench --latency [--rates LIST] [--duration-ms N] [--connections N] [--servers LIST] [--json FILE]
//
// CLI11 reads the command line (--name VALUE or --name=VALUE); the values
// are checked here. Bad input throws cli_error with a message naming the
// argument, the value and what is accepted; main() prints it and exits 2.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/suite.hpp"

namespace strata_bench {

struct cli_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct options {
  std::string filter_text;                 // as given; empty: every benchmark
  std::optional<std::regex> filter;        // ECMAScript, searched in the benchmark name
  std::vector<unsigned> threads;           // in the order given, duplicates dropped
  bool threads_given = false;              // --threads was on the command line
  std::vector<runtime_id> runtimes;        // in the order given, duplicates dropped
  bool runtimes_given = false;             // --runtimes was on the command line
  unsigned reps = 5;                       // timed runs after one warm-up
  std::string json_path;                   // empty: no JSON
  std::string plot_dir;                    // --plot: JSON, PNGs and index.html there; empty: none
  bool list = false;
  bool help = false;
  bool emit_records = false;               // internal: helper mode (records on stdout)
  bool placement_report = false;           // --placement-report: page locality of the STREAM placements
  std::size_t n = 0;                       // --n: report array size; 0: the stream benchmark's
  bool latency = false;                    // --latency: the open-loop HTTP benchmark (latency.hpp)
  std::vector<double> rates;               // --rates: offered requests/s; empty: the defaults
  unsigned duration_ms = 2000;             // --duration-ms: measured per rate
  unsigned connections = 100;              // --connections
  std::vector<std::string> servers;        // --servers: the latency columns; empty: all (k_latency_servers)
};

// The servers --latency runs, in column order.
inline constexpr std::array<const char*, 4> k_latency_servers{"asio", "tiered_stealing", "pinned_mpsc", "hybrid"};

inline constexpr unsigned k_max_threads = 4096;
inline constexpr unsigned k_max_reps = 100000;
inline constexpr std::size_t k_max_report_n = std::size_t{1} << 34;

// default_threads: the thread list when --threads is absent (1..usable CPUs).
options parse_cli(int argc, char** argv, unsigned usable_cpus);

// "1,2,4", "1-16", "1,2,8-12": ascending ranges of 1..k_max_threads.
std::vector<unsigned> parse_thread_list(std::string_view text);

// "serial,tbb,omp": known runtime names.
std::vector<runtime_id> parse_runtime_list(std::string_view text);

std::string usage();

}  // namespace strata_bench
