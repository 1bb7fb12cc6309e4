// strata-bench --latency: seed 003's open-loop latency benchmark.
//
// The servers: bench/http's strata-http under each policy (tiered_stealing,
// pinned_mpsc, hybrid) and asio-http (Boost.Asio, one io_context per
// thread), each a process of its own with 2 workers (threads), a 1 ms mock
// delay per request and the same answers. The client: loadgen.hpp, 100
// keep-alive connections over loopback at fixed offered rates. Per server
// and rate: p50..p99.9 (from intended send times), the achieved rate, and
// the server process's CPU use, context switches, CPU migrations and page
// faults, from /proc (every thread's status and sched, the process's stat).
// Three scenarios: `balanced` (the mock delay only), `unbalanced` (every
// request asks 50 us of CPU work, connection 0's ten times as much in one
// task) and `fan-out` (connection 0's in ten tasks of 50 us). hybrid runs
// with STRATA_HYBRID_BOUND=2 unless the environment sets it.
#pragma once

#include <string>
#include <vector>

namespace strata_bench {

struct latency_options {
  std::vector<double> rates;  // offered requests/s; empty: the defaults
  unsigned duration_ms = 2000;
  unsigned connections = 100;
  std::string json_path;      // empty: no JSON
  std::vector<std::string> servers;  // column names (cli.hpp's k_latency_servers); empty: all
};

// Runs every server asked for (all by default) at every rate, prints the
// tables; 0 when every run completed with every answer correct, 1
// otherwise (the failures named).
int run_latency(const latency_options& o);

}  // namespace strata_bench
