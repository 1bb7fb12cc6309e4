// An open-loop HTTP load generator (seed 003's latency benchmark, issue 22).
//
// Open loop: the requests are scheduled on intended send times at a fixed
// offered rate (request i at start + i / rate, round robin over the
// connections), whatever the server does. Each connection has at most one
// request outstanding (keep-alive, no pipelining, as browsers and wrk); when
// an answer comes late, the connection's next request, already due, goes at
// once, and its latency still counts from its intended time. So a stall of
// the server shows in the percentiles as the queue a real client population
// would have seen, not as a pause of the client (coordinated omission
// corrected, as wrk2 does). Requests still unsent at the end are counted
// (`unsent`): the rate was above what the server could take.
//
// One thread, one epoll set, sleeps in epoll_pwait2 until the next intended
// send time (nanosecond timeout): the client does not spin on a core it
// shares with the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace strata_bench {

struct load_spec {
  std::uint16_t port = 0;      // the server on 127.0.0.1
  unsigned connections = 100;
  double rate = 1000;          // offered requests per second, all connections together
  std::chrono::milliseconds warmup{300};   // sent and answered, not recorded
  std::chrono::milliseconds measure{2000};  // recorded: requests intended in this window
  long cpu_us = 0;             // "cpu=" work asked of the server per request (0: none)
  long heavy_cpu_us = 0;       // connection 0's requests ask this much instead (0: as the others)
  long heavy_tasks = 1;        // ... in this many tasks of heavy_cpu_us each ("tasks=", a fan-out)
};

struct load_result {
  std::vector<double> latency_us;  // one per request intended in the window and answered, sorted
  std::uint64_t sent = 0, answered = 0, unsent = 0, errors = 0;
  double window_s = 0;             // the measured window
  double achieved_rate() const noexcept { return window_s > 0 ? static_cast<double>(latency_us.size()) / window_s : 0; }
  // The p-th percentile (0 < p <= 100) of latency_us; 0 when empty.
  double percentile(double p) const noexcept;
};

// Runs one load against the server; throws std::runtime_error naming what
// failed (connect, a closed connection, a malformed answer).
load_result run_load(const load_spec& spec);

}  // namespace strata_bench
