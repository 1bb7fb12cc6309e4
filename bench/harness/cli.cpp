#include "harness/cli.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>

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

std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

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
      throw cli_error("--threads " + in_quotes(text) + ": " + in_quotes(item) +
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
      throw cli_error("--runtimes " + in_quotes(text) + ": unknown runtime " + in_quotes(item) +
                      "; accepted: a comma-separated list of " + accepted_runtimes());
    }
    append_unique(runtimes, *r);
  }
  return runtimes;
}

namespace {

// Option groups: the help table lists k_listed; --help is accepted but not
// listed; --emit-records (helper mode, internal) is neither.
constexpr const char* k_listed = "options";
constexpr const char* k_help = "help";

// "--threads LIST", "--list": the name and, for an option with a value, the
// value's kind.
std::string label(const CLI::Option* opt) {
  return opt->get_expected_max() > 0 ? opt->get_name() + " " + opt->get_type_name() : opt->get_name();
}

// The help text: the usage lines, one entry per listed option (its label in
// a 17-column field, the description after it, continuation lines indented
// to the description; a label that fills the field puts the description on
// the next line) and the closing paragraph. CLI11's default formatter lays
// options out differently.
std::string help_text(const CLI::App* app) {
  constexpr std::size_t k_field = 17;
  const std::string indent(2 + k_field, ' ');
  std::string out = app->get_description() + "\n";
  for (const CLI::Option* opt : app->get_options([](const CLI::Option* o) { return o->get_group() == k_listed; })) {
    const std::string name = label(opt);
    out += "  " + name;
    out += name.size() < k_field ? std::string(k_field - name.size(), ' ') : "\n" + indent;
    const std::string& text = opt->get_description();
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = text.find('\n', at);
      if (end == std::string::npos) {
        end = text.size();
      }
      out += (at == 0 ? "" : indent) + text.substr(at, end - at) + "\n";
      at = end + 1;
    }
  }
  return out + "\n" + app->get_footer();
}

// The options strata-bench accepts, for "unknown argument": the listed ones
// and --help.
std::string accepted_options(const CLI::App& app) {
  std::string s;
  for (const CLI::Option* opt : app.get_options(
           [](const CLI::Option* o) { return o->get_group() == k_listed || o->get_group() == k_help; })) {
    s += (s.empty() ? "" : ", ") + label(opt);
  }
  return s;
}

// The command line as CLI11 sees it, bound to one options value. CLI11
// parses (--name value and --name=value, flags, missing values, unknown
// arguments); the values are checked by the functions above, in the order
// given (trigger_on_parse), so the first bad argument is the one reported.
class command_line {
 public:
  command_line() {
    m_app.name("strata-bench");
    m_app.description(
        "usage: strata-bench [--filter REGEX] [--threads LIST] [--runtimes LIST] [--reps N]\n"
        "                    [--json FILE] [--plot DIR] [--list]\n"
        "       strata-bench --placement-report [--n N] [--threads LIST] [--json FILE]\n"
        "       strata-bench --latency [--rates LIST] [--duration-ms N] [--connections N] [--servers LIST]\n"
        "                              [--json FILE]\n");
    m_app.footer(
        "The table on stdout reports median, min and max wall time over the timed runs, the\n"
        "check (ok: every run's answer was verified), the speedup over serial and, for stream,\n"
        "jacobi and the actor benchmarks, the median rate (GB/s, MLUP/s, Mmsg/s). Exit status:\n"
        "0 all checks ok, 1 a check failed, 2 bad command line. OpenMP runs with\n"
        "OMP_PROC_BIND=close OMP_PLACES=cores unless the environment sets them.\n");
    m_app.formatter_fn([](const CLI::App* app, const std::string&, CLI::AppFormatMode) { return help_text(app); });
    m_app.set_help_flag();  // --help is an ordinary flag: main() prints the help and exits 0
    // Unknown arguments are collected and reported below with what is accepted.
    m_app.allow_extras();

    value("--filter", "REGEX",
          "run the benchmarks whose name matches (ECMAScript, searched);\n"
          "default: all (see --list)",
          "a regular expression (ECMAScript) matched against benchmark names", [this](const std::string& v) {
            m_options.filter_text = v;
            try {
              m_options.filter.emplace(v, std::regex::ECMAScript);
            } catch (const std::regex_error& e) {
              throw cli_error("--filter " + in_quotes(v) +
                              ": not a valid regular expression (ECMAScript syntax, e.g. 'fib|uts'): " + e.what());
            }
          });
    value("--threads", "LIST",
          "thread counts, e.g. 1,2,4 or 1-16; default 1..usable CPUs.\n"
          "serial always runs once, with 1 thread",
          "a thread list such as 1,2 or 1-16", [this](const std::string& v) {
            m_options.threads = parse_thread_list(v);
            m_options.threads_given = true;
          });
    value("--runtimes", "LIST",
          "any of " + accepted_runtimes() + "; default: every one built in\n" +
              "(caf: actor benchmarks only; tbb, omp, omp-llvm: no actor ones)",
          "a comma-separated list of " + accepted_runtimes(), [this](const std::string& v) {
            m_options.runtimes = parse_runtime_list(v);
            m_options.runtimes_given = true;
          });
    value("--reps", "N", "timed runs per (benchmark, runtime, threads) after 1 warm-up; default 5",
          "the number of timed runs, 1.." + std::to_string(k_max_reps), [this](const std::string& v) {
            const std::optional<unsigned> n = parse_number(v, 1, k_max_reps);
            if (!n) {
              throw cli_error("--reps " + in_quotes(v) + ": accepted: a whole number of timed runs from 1 to " +
                              std::to_string(k_max_reps) + " (one warm-up run always comes first)");
            }
            m_options.reps = *n;
            m_reps_given = true;
          });
    value("--json", "FILE", "also write the records as a JSON array to FILE", "the path of the JSON file to write",
          [this](const std::string& v) {
            if (v.empty()) {
              throw cli_error("--json needs a non-empty file path");
            }
            m_options.json_path = v;
          });
    value("--plot", "DIR",
          "write DIR/results.json (unless --json), PNG plots (time, speedup\n"
          "over serial against ideal, strata over the best peer) and\n"
          "DIR/index.html, a one-page summary (matplotlib: python3-matplotlib)",
          "the directory for the plots", [this](const std::string& v) {
            if (v.empty()) {
              throw cli_error("--plot needs a non-empty directory path");
            }
            m_options.plot_dir = v;
          });
    flag("--list", "list the benchmarks and the runtimes built in, then exit", m_options.list);
    flag("--placement-report",
         "instead of timing: for each strata STREAM placement, the share of\n"
         "sampled pages on the node of the worker that uses them; --threads\n"
         "default: usable CPUs; --json writes the report",
         m_options.placement_report);
    value("--n", "N",
          "elements per array for the report (default: STRATA_BENCH_STREAM_N\n"
          "or 2^25)",
          "the elements per array of the placement report", [this](const std::string& v) {
            const std::optional<std::size_t> n = parse_size(v, 1, k_max_report_n);
            if (!n) {
              throw cli_error("--n " + in_quotes(v) + ": accepted: a whole number of elements per array from 1 to " +
                              std::to_string(k_max_report_n));
            }
            m_options.n = *n;
          });
    flag("--latency",
         "instead of the suite: the open-loop HTTP latency benchmark (seed 003):\n"
         "strata-http under each policy and asio-http at fixed offered rates",
         m_options.latency);
    value("--rates", "LIST", "offered requests/s for --latency, e.g. 2000,5000; default 2000,5000,10000,20000",
          "a comma-separated list of rates from 1 to 1000000 requests/s", [this](const std::string& v) {
            m_options.rates.clear();
            for (std::string_view item : split(v, ',')) {
              const std::optional<unsigned> r = parse_number(item, 1, 1000000);
              if (!r) {
                throw cli_error("--rates " + in_quotes(v) +
                                ": accepted: a comma-separated list of rates from 1 to 1000000 requests/s");
              }
              m_options.rates.push_back(*r);
            }
          });
    value("--duration-ms", "N", "--latency: milliseconds measured per rate (after 300 ms of warm-up); default 2000",
          "milliseconds from 100 to 600000", [this](const std::string& v) {
            const std::optional<unsigned> n = parse_number(v, 100, 600000);
            if (!n) throw cli_error("--duration-ms " + in_quotes(v) + ": accepted: milliseconds from 100 to 600000");
            m_options.duration_ms = *n;
          });
    value("--connections", "N", "--latency: keep-alive connections of the load generator; default 100",
          "a number of connections from 1 to 10000", [this](const std::string& v) {
            const std::optional<unsigned> n = parse_number(v, 1, 10000);
            if (!n) throw cli_error("--connections " + in_quotes(v) + ": accepted: 1 to 10000 connections");
            m_options.connections = *n;
          });
    value("--servers", "LIST", "--latency: the servers to run, e.g. asio,pinned_mpsc; default all four",
          "a comma-separated list of asio, tiered_stealing, pinned_mpsc, hybrid", [this](const std::string& v) {
            m_options.servers.clear();
            for (std::string_view name : split(v, ',')) {
              if (std::find(k_latency_servers.begin(), k_latency_servers.end(), name) == k_latency_servers.end()) {
                throw cli_error("--servers " + in_quotes(v) + ": unknown server " + in_quotes(name) +
                                "; accepted: a comma-separated list of asio, tiered_stealing, pinned_mpsc, hybrid");
              }
              if (std::find(m_options.servers.begin(), m_options.servers.end(), name) == m_options.servers.end()) {
                m_options.servers.emplace_back(name);
              }
            }
          });
    flag("--help,-h", "", m_options.help)->group(k_help);
    flag("--emit-records", "", m_options.emit_records)->group("");
  }

  command_line(const command_line&) = delete;
  command_line& operator=(const command_line&) = delete;

  options parse(int argc, char** argv, unsigned usable_cpus) {
    try {
      m_app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      throw cli_error(explain(e));
    }
    if (const std::vector<std::string> extra = m_app.remaining(); !extra.empty()) {
      std::string_view arg = extra.front();
      if (arg.starts_with("--")) {
        arg = arg.substr(0, arg.find('='));
      }
      throw cli_error("unknown argument " + in_quotes(arg) + "; accepted: " + accepted_options(m_app));
    }
    options o = m_options;
    if (o.n != 0 && !o.placement_report) {
      throw cli_error("--n applies to --placement-report only (the stream benchmark takes its size from "
                      "STRATA_BENCH_STREAM_N)");
    }
    if (o.placement_report && (o.filter || o.runtimes_given || m_reps_given || o.list || o.emit_records)) {
      throw cli_error("--placement-report takes --n, --threads and --json only (it runs the strata STREAM "
                      "placements, no timing)");
    }
    const bool latency_only = !o.rates.empty() || m_options.duration_ms != 2000 || m_options.connections != 100 ||
                              !o.servers.empty();
    if (latency_only && !o.latency) {
      throw cli_error("--rates, --duration-ms, --connections and --servers apply to --latency only");
    }
    if (o.latency && (o.filter || o.runtimes_given || m_reps_given || o.list || o.emit_records || o.threads_given ||
                      o.placement_report || !o.plot_dir.empty() || o.n != 0)) {
      throw cli_error("--latency takes --rates, --duration-ms, --connections, --servers and --json only (its "
                      "servers run 2 workers each)");
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

  std::string help() const { return m_app.help(); }

 private:
  // An option with one value; needs: what the value is, for "needs a value".
  void value(const std::string& name, const std::string& type, const std::string& description,
             const std::string& needs, std::function<void(const std::string&)> check) {
    m_app.add_option_function<std::string>(name, std::move(check), description)
        ->type_name(type)
        ->group(k_listed)
        ->trigger_on_parse()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    m_needs[name] = needs;
  }

  // A flag: --flag=VALUE is refused, but for --flag=true, which CLI11 always
  // takes as the flag itself.
  CLI::Option* flag(const std::string& names, const std::string& description, bool& to) {
    return m_app.add_flag(names, to, description)->group(k_listed)->disable_flag_override();
  }

  // CLI11's wording for the two mistakes it catches itself, a missing value
  // and a value given to a flag, names the option but not what it takes.
  // Its messages start with the option's name ("--reps: 1 required TEXT
  // missing", "list was given a disallowed flag override"); that name finds
  // the option, and the message is said again the way the checks above say
  // theirs. Anything else keeps CLI11's message.
  std::string explain(const CLI::ParseError& e) const {
    const std::string what = e.what();
    std::string word = what.substr(0, what.find_first_of(": "));
    word.erase(0, word.find_first_not_of('-'));
    const CLI::Option* opt = word.empty() ? nullptr : m_app.get_option_no_throw("--" + word);
    if (opt == nullptr || dynamic_cast<const CLI::ArgumentMismatch*>(&e) == nullptr) {
      return what;
    }
    const std::string name = opt->get_name();
    if (opt->get_expected_max() == 0) {
      return name + " takes no value";
    }
    const auto needs = m_needs.find(name);
    return name + " needs a value" + (needs == m_needs.end() ? "" : ": " + needs->second);
  }

  CLI::App m_app;
  options m_options;
  bool m_reps_given = false;
  std::map<std::string, std::string> m_needs;  // value option -> what its value is
};

}  // namespace

options parse_cli(int argc, char** argv, unsigned usable_cpus) {
  return command_line().parse(argc, argv, usable_cpus);
}

std::string usage() { return command_line().help(); }

}  // namespace strata_bench
