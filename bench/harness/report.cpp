#include "harness/report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "harness/json_output.hpp"

namespace strata_bench {
namespace {

constexpr std::string_view k_record_tag = "strata-bench-record";

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A rate for people: one decimal from 10 up, two below (0.11 Mmsg/s).
std::string rate_text(const record& r) {
  return format(r.rate >= 10.0 ? "%.1f " : "%.2f ", r.rate) + r.rate_unit;
}

// Times and rates keep 9 significant digits in the file (nanoseconds for a
// run of about a second); more would be noise.
double nine_digits(double v) { return std::strtod(format("%.9g", v).c_str(), nullptr); }

nlohmann::ordered_json json_seconds(const record& r, double v) {
  return r.timed ? nlohmann::ordered_json(nine_digits(v)) : nlohmann::ordered_json(nullptr);
}

// Tabs and line breaks would break the one-line protocol.
std::string one_field(std::string_view s) {
  std::string out(s);
  std::replace_if(out.begin(), out.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return out;
}

// params without its "api=..." and "producer=..." words: the serial
// baseline of a runtime's API or producer variant is the serial record of
// the same workload.
std::string workload_params(const std::string& params) {
  std::string out;
  std::size_t at = 0;
  while (at < params.size()) {
    std::size_t end = params.find(' ', at);
    if (end == std::string::npos) end = params.size();
    const std::string_view word(params.data() + at, end - at);
    if (!word.empty() && !word.starts_with("api=") && !word.starts_with("producer=")) {
      if (!out.empty()) out += ' ';
      out += word;
    }
    at = end + 1;
  }
  return out;
}

}  // namespace

void print_table(std::ostream& out, const std::vector<record>& records) {
  // The baseline of a record: the serial record of the same benchmark and
  // workload params where there is one (bank, cholesky: one serial per
  // variant), else the benchmark's first serial record (stream: strata's
  // placements).
  std::map<std::string, const record*> serial;             // bench -> its first serial record
  std::map<std::string, const record*> serial_by_params;  // bench '\n' params -> that serial record
  for (const record& r : records) {
    if (r.runtime == "serial" && r.timed && r.ok()) {
      serial.emplace(r.bench, &r);
      serial_by_params.emplace(r.bench + '\n' + workload_params(r.params), &r);
    }
  }
  using row = std::array<std::string, 10>;
  std::vector<row> rows{{"bench", "params", "runtime", "threads", "median ms", "min ms", "max ms",
                         "check", "vs serial", "rate"}};
  for (const record& r : records) {
    const record* base = nullptr;
    if (const auto same = serial_by_params.find(r.bench + '\n' + workload_params(r.params)); same != serial_by_params.end()) {
      base = same->second;
    } else if (const auto first = serial.find(r.bench); first != serial.end()) {
      base = first->second;
    }
    const bool speedup = base != nullptr && r.timed && r.median_s > 0.0;
    rows.push_back({r.bench, r.params, r.runtime, std::to_string(r.threads),
                    r.timed ? format("%.3f", r.median_s * 1e3) : "-",
                    r.timed ? format("%.3f", r.min_s * 1e3) : "-",
                    r.timed ? format("%.3f", r.max_s * 1e3) : "-", r.check,
                    speedup ? format("%.2fx", base->median_s / r.median_s) : "-",
                    r.has_rate() ? rate_text(r) : "-"});
  }
  std::array<std::size_t, 10> width{};
  for (const row& x : rows) {
    for (std::size_t c = 0; c < x.size(); ++c) {
      width[c] = std::max(width[c], x[c].size());
    }
  }
  // Text columns left-aligned, numbers right-aligned.
  constexpr std::array<bool, 10> right{false, false, false, true, true, true, true, false, true, true};
  for (const row& x : rows) {
    std::string line;
    for (std::size_t c = 0; c < x.size(); ++c) {
      const std::string pad(width[c] - x[c].size(), ' ');
      line += c == 0 ? "" : "  ";
      line += right[c] ? pad + x[c] : x[c] + pad;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out << line << '\n';
  }
}

void write_json(std::ostream& out, const std::vector<record>& records) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const record& r : records) {
    nlohmann::ordered_json j = {{"bench", r.bench},
                                {"runtime", r.runtime},
                                {"threads", r.threads},
                                {"params", r.params},
                                {"median_s", json_seconds(r, r.median_s)},
                                {"min_s", json_seconds(r, r.min_s)},
                                {"max_s", json_seconds(r, r.max_s)},
                                {"reps", r.reps},
                                {"check", r.check}};
    if (r.has_rate()) {
      j["rate"] = nine_digits(r.rate);
      j["rate_unit"] = r.rate_unit;
    }
    if (!r.counters.empty()) {
      nlohmann::ordered_json per_run = nlohmann::ordered_json::object();
      for (const auto& [name, value] : r.counters) per_run[name] = nine_digits(value);
      j["counters_per_run"] = std::move(per_run);
    }
    list.push_back(std::move(j));
  }
  write_json_lines(out, list);
}

std::string encode_record(const record& r) {
  std::string line(k_record_tag);
  for (const std::string& f :
       {one_field(r.bench), one_field(r.params), one_field(r.runtime), std::to_string(r.threads),
        std::string(r.timed ? "1" : "0"), format("%.17g", r.median_s), format("%.17g", r.min_s),
        format("%.17g", r.max_s), std::to_string(r.reps), one_field(r.check), format("%.17g", r.rate),
        one_field(r.rate_unit)}) {
    line += '\t';
    line += f;
  }
  return line;
}

std::optional<record> decode_record(std::string_view line) {
  std::vector<std::string> f;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    f.emplace_back(line.substr(start, tab - start));
    if (tab == std::string_view::npos) {
      break;
    }
    start = tab + 1;
  }
  if (f.size() != 13 || f[0] != k_record_tag) {
    return std::nullopt;
  }
  record r;
  r.bench = f[1];
  r.params = f[2];
  r.runtime = f[3];
  r.threads = static_cast<unsigned>(std::strtoul(f[4].c_str(), nullptr, 10));
  r.timed = f[5] == "1";
  r.median_s = std::strtod(f[6].c_str(), nullptr);
  r.min_s = std::strtod(f[7].c_str(), nullptr);
  r.max_s = std::strtod(f[8].c_str(), nullptr);
  r.reps = static_cast<unsigned>(std::strtoul(f[9].c_str(), nullptr, 10));
  r.check = f[10];
  r.rate = std::strtod(f[11].c_str(), nullptr);
  r.rate_unit = f[12];
  return r;
}

std::string progress_line(const record& r) {
  std::string s = "strata-bench: " + r.bench + " " + r.runtime + " threads=" + std::to_string(r.threads);
  if (!r.params.empty()) {
    s.append(" [").append(r.params).append("]");
  }
  if (r.timed) {
    s += " median " + format("%.3f", r.median_s * 1e3) + " ms";
  }
  if (r.has_rate()) {
    s += ' ';
    s += rate_text(r);
  }
  return s + " " + r.check;
}

}  // namespace strata_bench
