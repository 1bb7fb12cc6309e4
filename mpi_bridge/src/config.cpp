// strata::mpi::config from the environment and its validation; the
// registry of remote functions; session_stats::to_json.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include <strata/mpi.hpp>
#include <strata/topology/error.hpp>

namespace strata::mpi {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

std::uint64_t parse_number(const char* name, const std::string& v, std::uint64_t lo, std::uint64_t hi) {
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(v, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || v[0] == '-' || n < lo || n > hi) {
    throw config_error(std::string("strata: ") + name + "='" + v + "' is invalid; accepted: an integer " +
                       std::to_string(lo) + " .. " + std::to_string(hi));
  }
  return n;
}

struct registry {
  std::mutex m;
  std::unordered_map<std::uint64_t, detail::remote_entry> by_id;
  std::unordered_map<const void*, std::uint64_t> by_fn;
  std::vector<std::string> conflicts;
};

registry& the_registry() {
  static registry r;
  return r;
}

}  // namespace

config config::from_env() {
  config c;
  if (const char* v = env("STRATA_MPI_MODE")) {
    const std::string s = v;
    if (s == "throughput") {
      c.mode = send_mode::throughput;
    } else if (s == "latency") {
      c.mode = send_mode::latency;
    } else {
      throw config_error("strata: STRATA_MPI_MODE='" + s + "' is invalid; accepted: throughput, latency");
    }
  }
  if (const char* v = env("STRATA_MPI_PROGRESS")) {
    const std::string s = v;
    if (s == "auto") {
      c.progress = progress_mode::automatic;
    } else if (s == "thread") {
      c.progress = progress_mode::thread;
    } else if (s == "caller") {
      c.progress = progress_mode::caller;
    } else if (s == "worker") {
      c.progress = progress_mode::worker;
    } else {
      throw config_error("strata: STRATA_MPI_PROGRESS='" + s + "' is invalid; accepted: auto, thread, worker, caller");
    }
  }
  if (const char* v = env("STRATA_MPI_COMM_WORKER")) {
    c.comm_worker = static_cast<unsigned>(parse_number("STRATA_MPI_COMM_WORKER", v, 0, 65535));
  }
  if (const char* v = env("STRATA_MPI_THREAD_LEVEL")) {
    const std::string s = v;
    if (s == "funneled") {
      c.init_level = thread_level::funneled;
    } else if (s == "serialized") {
      c.init_level = thread_level::serialized;
    } else if (s == "multiple") {
      c.init_level = thread_level::multiple;
    } else {
      throw config_error("strata: STRATA_MPI_THREAD_LEVEL='" + s +
                         "' is invalid; accepted: funneled, serialized, multiple");
    }
  }
  if (const char* v = env("STRATA_MPI_BUFFER_BYTES")) {
    c.buffer_bytes = parse_number("STRATA_MPI_BUFFER_BYTES", v, 4096, 4u << 20);
  }
  if (const char* v = env("STRATA_MPI_MAX_PENDING_BYTES")) {
    c.max_pending_bytes = parse_number("STRATA_MPI_MAX_PENDING_BYTES", v, 1u << 16, std::uint64_t{1} << 40);
  }
  if (const char* v = env("STRATA_MPI_FLUSH_US")) {
    c.flush_delay_us = static_cast<unsigned>(parse_number("STRATA_MPI_FLUSH_US", v, 0, 1'000'000));
  }
  if (const char* v = env("STRATA_MPI_RECEIVES")) {
    c.receives = static_cast<unsigned>(parse_number("STRATA_MPI_RECEIVES", v, 2, 256));
  }
  if (const char* v = env("STRATA_MPI_CRC")) c.crc = parse_number("STRATA_MPI_CRC", v, 0, 1) == 1;
  if (const char* v = env("STRATA_MPI_FAST_APPEND")) {
    c.fast_append = parse_number("STRATA_MPI_FAST_APPEND", v, 0, 1) == 1;
  }
  if (const char* v = env("STRATA_MPI_HEARTBEAT_MS")) {
    c.heartbeat_ms = static_cast<unsigned>(parse_number("STRATA_MPI_HEARTBEAT_MS", v, 10, 600'000));
  }
  if (const char* v = env("STRATA_MPI_DEADLINE_MS")) {
    c.deadline_ms = static_cast<unsigned>(parse_number("STRATA_MPI_DEADLINE_MS", v, 0, 86'400'000));
    c.deadline_set = true;
  }
  if (const char* v = env("STRATA_MPI_LOOKUP_MS")) {
    c.lookup_ms = static_cast<unsigned>(parse_number("STRATA_MPI_LOOKUP_MS", v, 0, 86'400'000));
  }
  c.validate();
  return c;
}

void config::validate() const {
  if (buffer_bytes < 4096 || buffer_bytes > (4u << 20)) {
    throw config_error("strata: mpi config.buffer_bytes (STRATA_MPI_BUFFER_BYTES) = " + std::to_string(buffer_bytes) +
                       " is out of range; accepted: 4096 .. 4194304");
  }
  if (max_pending_bytes < 2 * buffer_bytes) {
    throw config_error("strata: mpi config.max_pending_bytes (STRATA_MPI_MAX_PENDING_BYTES) = " +
                       std::to_string(max_pending_bytes) +
                       " is below two buffers (" + std::to_string(2 * buffer_bytes) + ")");
  }
  if (max_message_bytes < buffer_bytes || max_message_bytes > (std::size_t{1} << 31) - 1024) {
    throw config_error("strata: mpi config.max_message_bytes = " + std::to_string(max_message_bytes) +
                       " is out of range; accepted: buffer_bytes .. 2 GiB - 1 KiB");
  }
  if (receives < 2 || receives > 256) {
    throw config_error("strata: mpi config.receives (STRATA_MPI_RECEIVES) = " + std::to_string(receives) +
                       " is out of range; accepted: 2 .. 256");
  }
  if (heartbeat_ms < 10) {
    throw config_error("strata: mpi config.heartbeat_ms (STRATA_MPI_HEARTBEAT_MS) = " + std::to_string(heartbeat_ms) +
                       "; accepted: at least 10");
  }
  if (deadline_ms != 0 && deadline_ms < 2 * heartbeat_ms) {
    throw config_error("strata: mpi config.deadline_ms (STRATA_MPI_DEADLINE_MS) = " + std::to_string(deadline_ms) +
                       " is below two heartbeats (" + std::to_string(2 * heartbeat_ms) +
                       " ms); accepted: 0 (never) or more");
  }
  if (lookup_ms > 86'400'000) {
    throw config_error("strata: mpi config.lookup_ms (STRATA_MPI_LOOKUP_MS) = " + std::to_string(lookup_ms) +
                       " is out of range; accepted: 0 .. 86400000");
  }
  if (init_level == thread_level::single) {
    throw config_error(
        "strata: mpi config.init_level (STRATA_MPI_THREAD_LEVEL) = single; accepted: funneled, serialized, multiple");
  }
}

namespace detail {

std::uint64_t name_hash(std::string_view name) noexcept { return strata::detail::fnv1a(name); }

void register_remote(remote_entry e) {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  auto it = r.by_id.find(e.id);
  if (it != r.by_id.end()) {
    // The same function registered from several translation units is fine;
    // two functions under one name (or one hash) are not.
    if (it->second.fn != e.fn) r.conflicts.push_back(e.name + " (also " + it->second.name + ")");
    return;
  }
  r.by_fn[e.fn] = e.id;
  r.by_id.emplace(e.id, std::move(e));
}

const remote_entry* find_remote(const void* fn) noexcept {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  auto it = r.by_fn.find(fn);
  return it == r.by_fn.end() ? nullptr : &r.by_id.at(it->second);
}

const remote_entry* find_remote(std::uint64_t id) noexcept {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  auto it = r.by_id.find(id);
  return it == r.by_id.end() ? nullptr : &it->second;
}

// The sorted names, and the registration conflicts (for the session's check).
std::vector<std::string> remote_names(std::vector<std::string>* conflicts) {
  registry& r = the_registry();
  std::lock_guard lock(r.m);
  std::vector<std::string> names;
  for (const auto& [id, e] : r.by_id) names.push_back(e.name);
  std::sort(names.begin(), names.end());
  if (conflicts != nullptr) *conflicts = r.conflicts;
  return names;
}

}  // namespace detail

std::string session_stats::to_json() const {
  nlohmann::ordered_json j;
  j["rank"] = rank;
  j["size"] = size;
  j["thread_level"] = thread_level;
  j["progress"] = progress;
  if (comm_worker >= 0) j["comm_worker"] = comm_worker;
  nlohmann::ordered_json ps = nlohmann::ordered_json::array();
  for (const auto& p : peers) {
    ps.push_back({{"rank", p.rank},
                  {"items_sent", p.items_sent},
                  {"bytes_sent", p.bytes_sent},
                  {"buffers_sent", p.buffers_sent},
                  {"items_received", p.items_received},
                  {"bytes_received", p.bytes_received},
                  {"buffers_received", p.buffers_received},
                  {"flush", {{"full", p.flush_full}, {"idle", p.flush_idle}, {"timer", p.flush_timer},
                             {"latency", p.flush_latency}}},
                  {"large_sent", p.large_sent},
                  {"last_heard_s", p.last_heard_s}});
  }
  j["peers"] = std::move(ps);
  nlohmann::ordered_json rj = nlohmann::ordered_json::object();
  for (const auto& [why, n] : rejects) rj[why] = n;
  j["rejects"] = std::move(rj);
  j["termination_rounds"] = termination_rounds;
  j["quiescence_calls"] = quiescence_calls;
  j["tasks_run"] = tasks_run;
  j["tasks_failed"] = tasks_failed;
  j["actor_messages"] = actor_messages;
  j["producer_waits"] = producer_waits;
  j["outboxes"] = outboxes;
  j["slots_retired"] = slots_retired;
  return j.dump();
}

}  // namespace strata::mpi
