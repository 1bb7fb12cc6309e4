// strata-bench --latency (latency.hpp): the servers as child processes, the
// load from loadgen.hpp, the server's costs from /proc.
#include "harness/latency.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/json_output.hpp"
#include "harness/loadgen.hpp"

namespace strata_bench {
namespace {

constexpr long k_delay_us = 1000;     // seed 003's mock delay
constexpr long k_cpu_us = 50;         // unbalanced: every request's CPU work
constexpr long k_heavy_factor = 10;   // connection 0's work, times k_cpu_us
constexpr unsigned k_server_workers = 2;

struct server_kind {
  std::string name;    // column title
  std::string binary;  // next to strata-bench
  std::string policy;  // STRATA_POLICY for strata-http; empty for asio-http
};

// What /proc says of a process: summed over its threads where per thread.
struct proc_sample {
  double cpu_s = 0;
  std::uint64_t ctx = 0, ctx_involuntary = 0, migrations = 0, faults = 0;
  std::chrono::steady_clock::time_point at;
};

std::string dir_of_self() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/'));
}

// The number after `key` on the line that starts with it, 0 where there is none.
double field_after(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const std::size_t at = line.find_first_of("0123456789", key.size());
    return at == std::string::npos ? 0 : std::strtod(line.c_str() + at, nullptr);
  }
  return 0;
}

std::uint64_t count_after(const std::string& path, const std::string& key) {
  return static_cast<std::uint64_t>(field_after(path, key));
}

proc_sample sample(pid_t pid) {
  proc_sample s;
  s.at = std::chrono::steady_clock::now();
  const std::string base = "/proc/" + std::to_string(pid);
  {
    std::ifstream in(base + "/stat");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t close = all.rfind(')');
    if (close != std::string::npos) {
      std::istringstream rest(all.substr(close + 2));
      std::vector<std::string> f;
      for (std::string x; rest >> x;) f.push_back(x);
      // After the comm: state(3) ... minflt(10) cminflt majflt(12) cmajflt utime(14) stime(15).
      if (f.size() > 12) {
        s.faults = std::stoull(f[7]) + std::stoull(f[9]);
        const auto ticks = static_cast<double>(std::stoull(f[11]) + std::stoull(f[12]));
        s.cpu_s = ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
      }
    }
  }
  double run_ms = 0;
  if (DIR* d = opendir((base + "/task").c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      const std::string t = base + "/task/" + e->d_name;
      const std::uint64_t involuntary = count_after(t + "/status", "nonvoluntary_ctxt_switches:");
      s.ctx += count_after(t + "/status", "voluntary_ctxt_switches:") + involuntary;
      s.ctx_involuntary += involuntary;
      s.migrations += count_after(t + "/sched", "se.nr_migrations");
      run_ms += field_after(t + "/sched", "se.sum_exec_runtime");
    }
    closedir(d);
  }
  // utime + stime count whole clock ticks (10 ms): a server answering 500
  // req/s for 400 ms may show none. The scheduler's per-thread run time is
  // kept in nanoseconds; it is used wherever the kernel shows it.
  if (run_ms > 0) s.cpu_s = run_ms / 1e3;
  return s;
}

// A server process, started on a free port, stopped (SIGINT) on destruction.
class server_process {
 public:
  explicit server_process(const server_kind& k) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("latency: pipe failed");
    m_pid = fork();
    if (m_pid < 0) throw std::runtime_error("latency: fork failed");
    if (m_pid == 0) {
      dup2(out[1], 1);
      close(out[0]);
      close(out[1]);
      if (!k.policy.empty()) setenv("STRATA_POLICY", k.policy.c_str(), 1);
      // A server's queue should hold about one request's work before the
      // rest is shared: hybrid runs with a bound of 2 here unless it is set.
      setenv("STRATA_HYBRID_BOUND", "2", 0);
      const std::string workers = std::to_string(k_server_workers), delay = std::to_string(k_delay_us);
      execl(k.binary.c_str(), k.binary.c_str(), "--workers", workers.c_str(), "--delay-us", delay.c_str(),
            static_cast<char*>(nullptr));
      std::fprintf(stderr, "latency: cannot run %s: %s\n", k.binary.c_str(), std::strerror(errno));
      _exit(127);
    }
    close(out[1]);
    m_out = fdopen(out[0], "r");
    char line[512];
    while (std::fgets(line, sizeof line, m_out) != nullptr) {
      if (const char* at = std::strstr(line, "listening on 127.0.0.1:")) {
        m_port = static_cast<std::uint16_t>(std::strtoul(at + 23, nullptr, 10));
        return;
      }
    }
    stop();
    throw std::runtime_error("latency: " + k.binary + " did not start (no 'listening on' line)");
  }
  ~server_process() { stop(); }
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  std::uint16_t port() const noexcept { return m_port; }
  pid_t pid() const noexcept { return m_pid; }
  // Stops the server; true when it exited with status 0.
  bool stop() {
    if (m_pid <= 0) return m_ok;
    kill(m_pid, SIGINT);
    char line[4096];
    while (m_out != nullptr && std::fgets(line, sizeof line, m_out) != nullptr) {
    }
    int status = 0;
    waitpid(m_pid, &status, 0);
    if (m_out != nullptr) std::fclose(m_out);
    m_out = nullptr;
    m_pid = -1;
    m_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return m_ok;
  }

 private:
  pid_t m_pid = -1;
  FILE* m_out = nullptr;
  std::uint16_t m_port = 0;
  bool m_ok = false;
};

struct cell {
  load_result load;
  double cpu = 0, ctx_s = 0, ctx_req = 0, invol_req = 0, migr_s = 0, faults_s = 0;
  std::string error;
};

cell measure(const server_process& s, const load_spec& spec) {
  cell c;
  const proc_sample a = sample(s.pid());
  try {
    c.load = run_load(spec);
  } catch (const std::exception& e) {
    c.error = e.what();
    return c;
  }
  const proc_sample b = sample(s.pid());
  const double dt = std::chrono::duration<double>(b.at - a.at).count();
  c.cpu = (b.cpu_s - a.cpu_s) / dt;
  c.ctx_s = static_cast<double>(b.ctx - a.ctx) / dt;
  c.ctx_req = c.load.answered > 0 ? static_cast<double>(b.ctx - a.ctx) / static_cast<double>(c.load.answered) : 0;
  c.invol_req = c.load.answered > 0 ? static_cast<double>(b.ctx_involuntary - a.ctx_involuntary) /
                                          static_cast<double>(c.load.answered)
                                    : 0;
  c.migr_s = static_cast<double>(b.migrations - a.migrations) / dt;
  c.faults_s = static_cast<double>(b.faults - a.faults) / dt;
  return c;
}

std::string ms(double us) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(us < 10000 ? 2 : 1) << us / 1000 << " ms";
  return o.str();
}

std::string num(double v, int digits = 0) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

void print_block(const std::string& title, const std::vector<server_kind>& kinds, const std::vector<cell>& cells) {
  std::cout << "\n" << title << "\n";
  std::cout << std::left << std::setw(18) << "metric";
  for (const auto& k : kinds) std::cout << std::right << std::setw(17) << k.name;
  std::cout << "\n";
  auto row = [&](const char* name, auto value) {
    std::cout << std::left << std::setw(18) << name;
    for (const auto& c : cells) std::cout << std::right << std::setw(17) << (c.error.empty() ? value(c) : "FAIL");
    std::cout << "\n";
  };
  for (double p : {50.0, 75.0, 90.0, 99.0, 99.9}) {
    const std::string name = "p" + (p == 99.9 ? std::string("99.9") : num(p));
    row(name.c_str(), [p](const cell& c) { return ms(c.load.percentile(p)); });
  }
  row("achieved req/s", [](const cell& c) { return num(c.load.achieved_rate()); });
  row("unsent", [](const cell& c) { return num(static_cast<double>(c.load.unsent)); });
  row("CPU (cores)", [](const cell& c) { return num(c.cpu, 2); });
  row("ctx switches/s", [](const cell& c) { return num(c.ctx_s); });
  row("ctx switches/req", [](const cell& c) { return num(c.ctx_req, 2); });
  row("  involuntary/req", [](const cell& c) { return num(c.invol_req, 2); });
  row("migrations/s", [](const cell& c) { return num(c.migr_s); });
  row("page faults/s", [](const cell& c) { return num(c.faults_s); });
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (!cells[i].error.empty()) std::cout << "  " << kinds[i].name << ": " << cells[i].error << "\n";
  }
}

}  // namespace

int run_latency(const latency_options& o) {
  const std::string dir = dir_of_self();
  const auto wanted = [&o](const char* name) {
    return o.servers.empty() || std::find(o.servers.begin(), o.servers.end(), name) != o.servers.end();
  };
  std::vector<server_kind> kinds;
  if (!wanted("asio")) {
    // left out on request
  } else if (access((dir + "/asio-http").c_str(), X_OK) == 0) {
    kinds.push_back({"asio", dir + "/asio-http", ""});
  } else {
    std::cerr << "strata-bench --latency: no asio-http next to strata-bench (Boost.Asio headers missing at "
                 "configure): the Asio column is left out\n";
  }
  if (access((dir + "/strata-http").c_str(), X_OK) != 0) {
    std::cerr << "strata-bench --latency: no strata-http next to strata-bench (" << dir << ")\n";
    return 2;
  }
  for (const char* p : {"tiered_stealing", "pinned_mpsc", "hybrid"}) {
    if (wanted(p)) kinds.push_back({p, dir + "/strata-http", p});
  }
  if (kinds.empty()) {
    std::cerr << "strata-bench --latency: no server left to run (asio-http was asked for alone and is not built)\n";
    return 1;
  }
  const std::vector<double> rates = o.rates.empty() ? std::vector<double>{2000, 5000, 10000, 20000} : o.rates;
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  bool all_ok = true;
  struct scenario {
    const char* name;
    long cpu_us, heavy_us, heavy_tasks;
    std::vector<double> rates;
  };
  // Connection 0's ten times the work, once as one task (which no
  // scheduler that keeps I/O on its worker can share) and once fanned out
  // into ten tasks (what hybrid's spill is for).
  const std::vector<scenario> scenarios{
      {"balanced", 0, 0, 1, rates},
      {"unbalanced", k_cpu_us, k_cpu_us * k_heavy_factor, 1, {rates[rates.size() / 2]}},
      {"fan-out", k_cpu_us, k_cpu_us, k_heavy_factor, {rates[rates.size() / 2]}}};
  std::cout << "strata-bench --latency: " << o.connections << " connections over loopback, servers with "
            << k_server_workers << " workers, " << k_delay_us << " us mock delay, " << o.duration_ms
            << " ms measured per rate; latency from the intended send time (open loop)\n";
  for (const scenario& sc : scenarios) {
    std::vector<std::vector<cell>> by_rate(sc.rates.size());
    for (const server_kind& k : kinds) {
      std::optional<server_process> s;
      try {
        s.emplace(k);
      } catch (const std::exception& e) {
        for (auto& cells : by_rate) cells.push_back(cell{{}, 0, 0, 0, 0, 0, 0, e.what()});
        all_ok = false;
        continue;
      }
      for (std::size_t r = 0; r < sc.rates.size(); ++r) {
        load_spec spec;
        spec.port = s->port();
        spec.connections = o.connections;
        spec.rate = sc.rates[r];
        spec.measure = std::chrono::milliseconds(o.duration_ms);
        spec.cpu_us = sc.cpu_us;
        spec.heavy_cpu_us = sc.heavy_us;
        spec.heavy_tasks = sc.heavy_tasks;
        by_rate[r].push_back(measure(*s, spec));
      }
      if (!s->stop()) {
        for (auto& cells : by_rate) {
          if (cells.back().error.empty()) cells.back().error = k.binary + " exited with an error";
        }
      }
    }
    for (std::size_t r = 0; r < sc.rates.size(); ++r) {
      std::string title = std::string(sc.name) + ", offered " + num(sc.rates[r]) + " req/s";
      if (sc.heavy_tasks > 1) {
        title += " (every request " + std::to_string(sc.cpu_us) + " us of CPU work, connection 0's " +
                 std::to_string(sc.heavy_tasks) + " tasks of " + std::to_string(sc.heavy_us) + " us)";
      } else if (sc.heavy_us > 0) {
        title += " (every request " + std::to_string(sc.cpu_us) + " us of CPU work, connection 0's " +
                 std::to_string(sc.heavy_us) + " us)";
      }
      print_block(title, kinds, by_rate[r]);
      for (std::size_t i = 0; i < kinds.size(); ++i) {
        const cell& c = by_rate[r][i];
        all_ok = all_ok && c.error.empty();
        nlohmann::ordered_json j = {{"benchmark", "http_latency"}, {"scenario", sc.name},
                                    {"server", kinds[i].name},     {"offered_rate", sc.rates[r]},
                                    {"connections", o.connections}, {"ok", c.error.empty()}};
        if (!c.error.empty()) j["error"] = c.error;
        for (double p : {50.0, 75.0, 90.0, 99.0, 99.9}) {
          j["p" + (p == 99.9 ? std::string("99.9") : num(p)) + "_us"] = c.load.percentile(p);
        }
        j["achieved_rate"] = c.load.achieved_rate();
        j["unsent"] = c.load.unsent;
        j["cpu_cores"] = c.cpu;
        j["ctx_switches_per_s"] = c.ctx_s;
        j["ctx_switches_per_request"] = c.ctx_req;
        j["involuntary_switches_per_request"] = c.invol_req;
        j["migrations_per_s"] = c.migr_s;
        j["page_faults_per_s"] = c.faults_s;
        records.push_back(std::move(j));
      }
    }
  }
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    write_json_lines(out, records);
    if (!out) {
      std::cerr << "strata-bench --latency: cannot write " << o.json_path << "\n";
      return 1;
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace strata_bench
