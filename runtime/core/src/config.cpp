// runtime_config::from_env() and validation; config::from_env() reads both
// parts of strata::config.
#include <cstdlib>
#include <exception>
#include <string>

#include <strata/runtime/config.hpp>
#include <strata/runtime/error.hpp>
#include <strata/topology/error.hpp>

namespace strata {
namespace {
constexpr std::size_t k_min_trace_events = 1024;
constexpr std::size_t k_max_trace_events = std::size_t{1} << 26;
constexpr unsigned k_max_hybrid_bound = 1u << 20;

// A decimal count in [lo, hi] from variable `name`, or config_error naming it.
unsigned parse_count(const char* name, const std::string& s, unsigned lo, unsigned hi, const char* unit) {
  const bool digits = !s.empty() && s.size() <= 7 && s.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoul(s) < lo || std::stoul(s) > hi) {
    throw config_error(std::string("strata: ") + name + "='" + s + "' is invalid; accepted: " + std::to_string(lo) +
                       " to " + std::to_string(hi) + " (" + unit + ")");
  }
  return static_cast<unsigned>(std::stoul(s));
}
}  // namespace

const char* to_string(engine e) noexcept {
  switch (e) {
    case engine::owned: return "owned";
    case engine::external: return "external";
  }
  return "?";
}

const char* to_string(policy p) noexcept {
  switch (p) {
    case policy::tiered_stealing: return "tiered_stealing";
    case policy::pinned_mpsc: return "pinned_mpsc";
    case policy::hybrid: return "hybrid";
  }
  return "?";
}

runtime_config runtime_config::from_env() {
  runtime_config c;
  if (const char* v = std::getenv("STRATA_POLICY")) {
    const std::string p = v;
    if (p == "tiered_stealing") {
      c.policy = policy::tiered_stealing;
    } else if (p == "pinned_mpsc") {
      c.policy = policy::pinned_mpsc;
    } else if (p == "hybrid") {
      c.policy = policy::hybrid;
    } else {
      throw config_error("strata: STRATA_POLICY='" + p + "' is invalid; accepted: tiered_stealing, pinned_mpsc, hybrid");
    }
  }
  if (const char* v = std::getenv("STRATA_PERF_COUNTERS"); v != nullptr && *v != '\0') {
    c.perf_counters = detail::parse_flag("STRATA_PERF_COUNTERS", v);
  }
  if (const char* v = std::getenv("STRATA_TRACE")) c.trace_file = v;
  if (const char* v = std::getenv("STRATA_TRACE_EVENTS"); v != nullptr && *v != '\0') {
    const std::string s = v;
    std::size_t used = 0;
    unsigned long long n = 0;
    try {
      n = std::stoull(s, &used, 10);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != s.size() || s[0] == '-' || n < k_min_trace_events || n > k_max_trace_events) {
      throw config_error("strata: STRATA_TRACE_EVENTS='" + s +
                         "' is invalid; accepted: a count of events per thread, " +
                         std::to_string(k_min_trace_events) + " to " + std::to_string(k_max_trace_events));
    }
    c.trace_events = static_cast<std::size_t>(n);
  }
  if (const char* v = std::getenv("STRATA_IO_POLL_US"); v != nullptr && *v != '\0') {
    c.io_poll_us = parse_count("STRATA_IO_POLL_US", v, 0, 1000000, "microseconds");
  }
  if (const char* v = std::getenv("STRATA_HYBRID_BOUND"); v != nullptr && *v != '\0') {
    c.hybrid_bound = parse_count("STRATA_HYBRID_BOUND", v, 1, k_max_hybrid_bound, "tasks per worker queue");
  }
  return c;
}

void runtime_config::validate() const {
  if (policy != policy::tiered_stealing && policy != policy::pinned_mpsc && policy != policy::hybrid) {
    throw config_error("strata: config.policy is not a strata::policy value; accepted: tiered_stealing, "
                       "pinned_mpsc, hybrid");
  }
  if (hybrid_bound == 0 || hybrid_bound > k_max_hybrid_bound) {
    throw config_error("strata: config.hybrid_bound is " + std::to_string(hybrid_bound) + "; accepted: 1 to " +
                       std::to_string(k_max_hybrid_bound));
  }
  if (engine != engine::owned && engine != engine::external) {
    throw config_error("strata: config.engine is not a strata::engine value; accepted: owned, external");
  }
  if (!trace_file.empty() && (trace_events < k_min_trace_events || trace_events > k_max_trace_events)) {
    throw config_error("strata: config.trace_events is " + std::to_string(trace_events) + "; accepted: " +
                       std::to_string(k_min_trace_events) + " to " + std::to_string(k_max_trace_events));
  }
  if (io_poll_us > 1000000) {
    throw config_error("strata: config.io_poll_us is " + std::to_string(io_poll_us) + "; accepted: 0 to 1000000");
  }
  if (actor_budget == 0) {
    throw usage_error("strata::config::actor_budget is 0; accepted: at least 1 message per actor turn");
  }
}

config config::from_env() { return config(placement_config::from_env(), runtime_config::from_env()); }

}  // namespace strata
