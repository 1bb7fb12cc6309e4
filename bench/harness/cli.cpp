#include "harness/cli.hpp"

#include <algorithm>
#include <charconv>

namespace strata_bench {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

// A decimal number in [lo, hi], digits only.
std::optional<unsigned> parse_number(std::string_view s, unsigned lo, unsigned hi) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  unsigned v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < lo || v > hi) {
    return std::nullopt;
  }
  return v;
}

// A decimal number in [lo, hi] that may exceed 32 bits (array sizes).
std::optional<std::size_t> parse_size(std::string_view s, std::size_t lo, std::size_t hi) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < lo || v > hi) {
    return std::nullopt;
  }
  return v;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string accepted_runtimes() {
  std::string s;
  for (runtime_id r : k_runtimes) {
    s += s.empty() ? "" : ", ";
    s += name(r);
  }
  return s;
}

template <class T>
void append_unique(std::vector<T>& v, T x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) {
    v.push_back(x);
  }
}

}  // namespace

std::vector<unsigned> parse_thread_list(std::string_view text) {
  const std::string accepted =
      "accepted: a comma-separated list of thread counts and ascending ranges, e.g. 1,2,4 or "
      "1-16 or 1,2,8-12 (each 1.." + std::to_string(k_max_threads) + ")";
  std::vector<unsigned> threads;
  for (std::string_view item : split(text, ',')) {
    const std::size_t dash = item.find('-');
    std::optional<unsigned> lo, hi;
    if (dash == std::string_view::npos) {
      lo = hi = parse_number(item, 1, k_max_threads);
    } else {
      lo = parse_number(item.substr(0, dash), 1, k_max_threads);
      hi = parse_number(item.substr(dash + 1), 1, k_max_threads);
    }
    if (!lo || !hi || *lo > *hi) {
      throw cli_error("--threads " + quoted(text) + ": " + quoted(item) +
                      " is not a thread count or range; " + accepted);
    }
    for (unsigned p = *lo; p <= *hi; ++p) {
      append_unique(threads, p);
    }
  }
  return threads;
}

std::vector<runtime_id> parse_runtime_list(std::string_view text) {
  std::vector<runtime_id> runtimes;
  for (std::string_view item : split(text, ',')) {
    const std::optional<runtime_id> r = runtime_from_name(item);
    if (!r) {
      throw cli_error("--runtimes " + quoted(text) + ": unknown runtime " + quoted(item) +
                      "; accepted: a comma-separated list of " + accepted_runtimes());
    }
    append_unique(runtimes, *r);
  }
  return runtimes;
}

options parse_cli(int argc, char** argv, unsigned usable_cpus) {
  options o;
  bool reps_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    bool has_value = false;
    // --name=value is accepted as well as --name value.
    if (arg.starts_with("--")) {
      if (const std::size_t eq = arg.find('='); eq != std::string_view::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_value = true;
      }
    }
    auto take_value = [&](std::string_view what) {
      if (has_value) {
        return value;
      }
      if (i + 1 >= argc) {
        throw cli_error(std::string(arg) + " needs a value: " + std::string(what));
      }
      return std::string_view(argv[++i]);
    };
    auto no_value = [&] {
      if (has_value) {
        throw cli_error(std::string(arg) + " takes no value");
      }
    };

    if (arg == "--filter") {
      o.filter_text = take_value("a regular expression (ECMAScript) matched against benchmark names");
      try {
        o.filter.emplace(o.filter_text, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw cli_error("--filter " + quoted(o.filter_text) +
                        ": not a valid regular expression (ECMAScript syntax, e.g. 'fib|uts'): " +
                        e.what());
      }
    } else if (arg == "--threads") {
      o.threads = parse_thread_list(take_value("a thread list such as 1,2 or 1-16"));
      o.threads_given = true;
    } else if (arg == "--runtimes") {
      o.runtimes = parse_runtime_list(take_value("a comma-separated list of " + accepted_runtimes()));
      o.runtimes_given = true;
    } else if (arg == "--reps") {
      const std::string_view v = take_value("the number of timed runs, 1.." + std::to_string(k_max_reps));
      const std::optional<unsigned> n = parse_number(v, 1, k_max_reps);
      if (!n) {
        throw cli_error("--reps " + quoted(v) + ": accepted: a whole number of timed runs from 1 to " +
                        std::to_string(k_max_reps) + " (one warm-up run always comes first)");
      }
      o.reps = *n;
      reps_given = true;
    } else if (arg == "--json") {
      o.json_path = take_value("the path of the JSON file to write");
      if (o.json_path.empty()) {
        throw cli_error("--json needs a non-empty file path");
      }
    } else if (arg == "--list") {
      no_value();
      o.list = true;
    } else if (arg == "--help" || arg == "-h") {
      no_value();
      o.help = true;
    } else if (arg == "--emit-records") {
      no_value();
      o.emit_records = true;
    } else if (arg == "--placement-report") {
      no_value();
      o.placement_report = true;
    } else if (arg == "--n") {
      const std::string_view v = take_value("the elements per array of the placement report");
      const std::optional<std::size_t> n = parse_size(v, 1, k_max_report_n);
      if (!n) {
        throw cli_error("--n " + quoted(v) + ": accepted: a whole number of elements per array from 1 to " +
                        std::to_string(k_max_report_n));
      }
      o.n = *n;
    } else {
      throw cli_error("unknown argument " + quoted(arg) +
                      "; accepted: --filter REGEX, --threads LIST, --runtimes LIST, --reps N, "
                      "--json FILE, --list, --placement-report, --n N, --help");
    }
  }
  if (o.n != 0 && !o.placement_report) {
    throw cli_error("--n applies to --placement-report only (the stream benchmark takes its size from "
                    "STRATA_BENCH_STREAM_N)");
  }
  if (o.placement_report && (o.filter || o.runtimes_given || reps_given || o.list || o.emit_records)) {
    throw cli_error("--placement-report takes --n, --threads and --json only (it runs the strata STREAM "
                    "placements, no timing)");
  }
  if (!o.threads_given) {
    for (unsigned p = 1; p <= std::min(usable_cpus, k_max_threads); ++p) {
      o.threads.push_back(p);
    }
  }
  if (!o.runtimes_given) {
    o.runtimes.assign(k_runtimes.begin(), k_runtimes.end());
  }
  return o;
}

std::string usage() {
  return "usage: strata-bench [--filter REGEX] [--threads LIST] [--runtimes LIST] [--reps N]\n"
         "                    [--json FILE] [--list]\n"
         "       strata-bench --placement-report [--n N] [--threads LIST] [--json FILE]\n"
         "\n"
         "  --filter REGEX   run the benchmarks whose name matches (ECMAScript, searched);\n"
         "                   default: all (see --list)\n"
         "  --threads LIST   thread counts, e.g. 1,2,4 or 1-16; default 1..usable CPUs.\n"
         "                   serial always runs once, with 1 thread\n"
         "  --runtimes LIST  any of " + accepted_runtimes() + "; default: every one built in\n"
         "                   (caf: actor benchmarks only; tbb, omp, omp-llvm: no actor ones)\n"
         "  --reps N         timed runs per (benchmark, runtime, threads) after 1 warm-up; default 5\n"
         "  --json FILE      also write the records as a JSON array to FILE\n"
         "  --list           list the benchmarks and the runtimes built in, then exit\n"
         "  --placement-report\n"
         "                   instead of timing: for each strata STREAM placement, the share of\n"
         "                   sampled pages on the node of the worker that uses them; --threads\n"
         "                   default: usable CPUs; --json writes the report\n"
         "  --n N            elements per array for the report (default: STRATA_BENCH_STREAM_N\n"
         "                   or 2^25)\n"
         "\n"
         "The table on stdout reports median, min and max wall time over the timed runs, the\n"
         "check (ok: every run's answer was verified), the speedup over serial and, for stream,\n"
         "jacobi and the actor benchmarks, the median rate (GB/s, MLUP/s, Mmsg/s). Exit status:\n"
         "0 all checks ok, 1 a check failed, 2 bad command line. OpenMP runs with\n"
         "OMP_PROC_BIND=close OMP_PLACES=cores unless the environment sets them.\n";
}

}  // namespace strata_bench
