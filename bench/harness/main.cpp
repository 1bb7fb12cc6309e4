// strata-bench: one harness for strata and its peers (serial, oneTBB, GNU
// libgomp, LLVM libomp through a helper process, the C++ Actor Framework).
// See bench/README.md.
//
// For each selected benchmark and thread count, the runtimes in the order
// serial (once, 1 thread, with the first thread count), strata, tbb, omp,
// caf that have a version of it, measured side by side (measure_group:
// prepare each outside the timed region, then 1 warm-up run and N timed
// runs of each, interleaved, then teardown); omp-llvm (a helper process)
// after them; then the table on stdout and, with --json, the JSON array.
// Exit status 0 when every check is ok, 1 when one failed, 2 on a bad
// command line.
// --placement-report prints where the pages of the strata STREAM
// placements live instead (stream/placement_report.hpp).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>
#include <utility>
#include <vector>

#include "harness/affinity.hpp"
#include "harness/cli.hpp"
#include "harness/measure.hpp"
#include "harness/latency.hpp"
#include "harness/plot.hpp"
#include "harness/report.hpp"
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
#include "harness/helper_process.hpp"
#endif
#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
#include "stream/placement_report.hpp"
#endif

namespace strata_bench {
namespace {

// Pause before each prepare and run (and each helper process) so the
// threads of the previous run have gone idle: libgomp and oneTBB spin a
// while after parallel work, strata about a millisecond, and CAF's threads
// poll every 50 us for about 80 ms after a burst (then every 10 ms).
constexpr std::chrono::milliseconds k_settle{100};

// OpenMP threads are pinned the way strata pins its workers by default (one
// per core, close together) unless the user chose: OMP_PROC_BIND=close and
// OMP_PLACES=cores are set where absent. libgomp reads them when it is
// loaded, before main, so a process that links it (the omp runtime) runs
// itself again with the new environment; LLVM libomp (the helper) reads
// them at its first parallel region, and the helper inherits them anyway.
void default_openmp_binding([[maybe_unused]] char** argv, [[maybe_unused]] bool quiet) {
#if defined(STRATA_BENCH_HAVE_OPENMP) || defined(STRATA_BENCH_OMP_LLVM_HELPER)
  std::string set;
  for (const auto& [variable, value] : {std::pair{"OMP_PROC_BIND", "close"}, std::pair{"OMP_PLACES", "cores"}}) {
    if (std::getenv(variable) == nullptr) {
      setenv(variable, value, 0);
      set += std::string(set.empty() ? "" : " ") + variable + "=" + value;
    }
  }
  if (set.empty()) {
    return;
  }
  if (!quiet) {
    std::cerr << "strata-bench: " << set << " (not set in the environment)" << std::endl;
  }
#if defined(STRATA_BENCH_HAVE_OPENMP) && !defined(STRATA_BENCH_LLVM_HELPER)
  execv("/proc/self/exe", argv);
  std::cerr << "strata-bench: cannot run again with " << set << " (execv /proc/self/exe: " << std::strerror(errno)
            << "); libgomp keeps its defaults" << std::endl;
#endif
#endif
}

void print_list(std::ostream& out) {
  out << "benchmarks:\n";
  for (const benchmark& b : suite()) {
    out << "  " << b.name << std::string(10 - std::min<std::size_t>(9, b.name.size()), ' ') << params_of(b)
        << (b.rate_unit.empty() ? "" : " (" + std::string(b.rate_unit) + ")") << "\n            " << b.summary
        << "\n";
    std::string on;
    for (runtime_id r : k_runtimes) {
      on += b.runtimes.has(r) ? (on.empty() ? "" : ", ") + std::string(name(r)) : "";
    }
    out << "            runtimes: " << on << "\n";
    for (const variant& v : b.variants) {
      if (v.prepare != nullptr) {
        out << "            " << name(v.runtime) << ": " << v.params << "\n";
      }
    }
  }
  out << "runtimes:\n";
  for (runtime_id r : k_runtimes) {
    const runtime_support s = support(r);
    out << "  " << name(r) << std::string(10 - name(r).size(), ' ')
        << (s.how == availability::absent ? "absent: " : "") << s.detail << "\n";
  }
}

int run(const options& o) {
  if (o.help) {
    std::cout << usage();
    return 0;
  }
  if (o.list) {
    print_list(std::cout);
    return 0;
  }
  if (o.latency) {
    set_main_thread_affinity_for(runtime_id::strata);  // every CPU: the servers inherit it
    return run_latency(latency_options{o.rates, o.duration_ms, o.connections, o.json_path, o.servers});
  }
  if (o.placement_report) {
#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
    set_main_thread_affinity_for(runtime_id::strata);
    const std::vector<unsigned> threads = o.threads_given ? o.threads : std::vector<unsigned>{usable_cpus()};
    return stream::run_placement_report(threads, o.n, o.json_path);
#else
    std::cerr << "strata-bench: --placement-report needs strata: " << support(runtime_id::strata).detail << "\n";
    return 2;
#endif
  }

  std::vector<const benchmark*> benches;
  for (const benchmark& b : suite()) {
    if (!o.filter || std::regex_search(b.name.begin(), b.name.end(), *o.filter)) {
      benches.push_back(&b);
    }
  }
  if (benches.empty()) {
    std::string names;
    for (const benchmark& b : suite()) {
      names += (names.empty() ? "" : ", ") + std::string(b.name);
    }
    std::cerr << "strata-bench: --filter '" << o.filter_text << "' matches no benchmark; the names are "
              << names << "\n";
    return 2;
  }

  // Runtimes this binary can run; the others are named once on stderr.
  std::vector<runtime_id> runtimes;
  for (runtime_id r : k_runtimes) {
    if (std::find(o.runtimes.begin(), o.runtimes.end(), r) == o.runtimes.end()) {
      continue;
    }
    const runtime_support s = support(r);
    if (s.how == availability::absent) {
      if (!o.emit_records) {
        std::cerr << "strata-bench: skipping " << name(r) << ": " << s.detail << "\n";
      }
      continue;
    }
    runtimes.push_back(r);
  }

  std::ofstream json;
  std::string json_path = o.json_path;
  if (!o.plot_dir.empty() && !o.emit_records) {
    if (const std::string why = prepare_plot_dir(o.plot_dir); !why.empty()) {
      std::cerr << "strata-bench: --plot '" << o.plot_dir << "': " << why << "\n";
      return 2;
    }
    if (json_path.empty()) json_path = o.plot_dir + "/results.json";
  }
  if (!json_path.empty()) {
    json.open(json_path);
    if (!json) {
      std::cerr << "strata-bench: --json '" << json_path << "': cannot open the file for writing\n";
      return 2;
    }
  }

  // What this run will do, up front (a long run must not surprise).
  std::size_t groups_total = 0;
  if (!o.emit_records) {
    std::string bench_names, thread_list, runtime_list;
    for (const benchmark* b : benches) bench_names += (bench_names.empty() ? "" : " ") + std::string(b->name);
    for (unsigned p : o.threads) thread_list += (thread_list.empty() ? "" : ",") + std::to_string(p);
    for (runtime_id r : runtimes) runtime_list += (runtime_list.empty() ? "" : ",") + std::string(name(r));
    std::cerr << "strata-bench: " << benches.size() << " benchmark(s) [" << bench_names << "] at threads "
              << thread_list << " with " << runtime_list << ", " << o.reps << " timed run(s) each after 1 warm-up"
              << std::endl;
  }
  groups_total = benches.size() * o.threads.size();
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
  for (const benchmark* b : benches) {
    for (runtime_id r : runtimes) {
      if (b->runtimes.has(r) && support(r).how == availability::helper) ++groups_total;
    }
  }
#endif
  std::size_t groups_done = 0;

  const auto suite_start = std::chrono::steady_clock::now();
  // One line per group on stderr: where the run is and about how long is left.
  auto announce = [&](const benchmark& b, const std::string& what) {
    ++groups_done;
    if (o.emit_records) return;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - suite_start).count();
    char line[256];
    if (groups_done == 1) {
      std::snprintf(line, sizeof line, "strata-bench: [%zu/%zu] %s %s", groups_done, groups_total,
                    std::string(b.name).c_str(), what.c_str());
    } else {
      const double left = elapsed / static_cast<double>(groups_done - 1) *
                          static_cast<double>(groups_total - groups_done + 1);
      std::snprintf(line, sizeof line, "strata-bench: [%zu/%zu] %s %s, %.0f s elapsed, about %.0f s left",
                    groups_done, groups_total, std::string(b.name).c_str(), what.c_str(), elapsed, left);
    }
    std::cerr << line << std::endl;
  };
  std::vector<record> records;
  bool first = true;
  auto add = [&](record r) {
    if (o.emit_records) {
      std::cout << encode_record(r) << std::endl;  // flushed: the parent reads a pipe
    } else {
      std::cerr << progress_line(r) << std::endl;
    }
    records.push_back(std::move(r));
  };
  auto settle = [&first] {
    if (!first) {
      std::this_thread::sleep_for(k_settle);
    }
    first = false;
  };
  // Per benchmark and thread count, one group measured side by side
  // (measure_group: every configuration prepared, runs interleaved): the
  // runtimes in order, each with its versions; serial joins the first
  // group. A helper runtime (omp-llvm, another process) runs its own
  // configurations after the groups.
  auto before_each = [&settle](runtime_id r) {
    settle();
    set_main_thread_affinity_for(r);  // also what a helper process inherits
  };
  for (const benchmark* b : benches) {
    std::vector<runtime_id> here;
    for (runtime_id r : runtimes) {
      if (b->runtimes.has(r)) {
        here.push_back(r);
      } else if (o.runtimes_given && !o.emit_records) {
        // tbb and OpenMP have no actors, caf has no tasks: not a failure.
        std::cerr << "strata-bench: " << b->name << " has no " << name(r) << " version\n";
      }
    }
    bool serial_measured = false;
    for (unsigned p : o.threads) {
      std::vector<configuration> group;
      for (runtime_id r : here) {
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
        if (support(r).how == availability::helper) {
          continue;
        }
#endif
        if (r == runtime_id::serial && serial_measured) {
          continue;
        }
        std::vector<version> versions = versions_of(*b, r);
        if (versions.empty()) {
          versions.push_back({params_of(*b), nullptr});  // measure_group() says it is missing
        }
        for (const version& v : versions) {
          const unsigned threads = r == runtime_id::serial ? 1 : p;
          if (threads < v.min_threads) {
            if (!o.emit_records) {
              std::cerr << "strata-bench: skipping " << b->name << " " << name(r) << " " << v.params << " at "
                        << threads << (threads == 1 ? " thread" : " threads") << ": it needs " << v.min_threads
                        << " or more\n";
            }
            continue;
          }
          group.push_back({r, v, threads});
        }
      }
      serial_measured = true;
      {
        std::string what;
        for (runtime_id r : here) {
          if (support(r).how != availability::in_process) continue;
          if (!what.empty()) what += ',';
          what += name(r);
        }
        announce(*b, what + " threads=" + std::to_string(p));
      }
      for (record& rec : measure_group(*b, group, o.reps, before_each)) {
        add(std::move(rec));
      }
    }
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
    for (runtime_id r : here) {
      if (support(r).how == availability::helper) {
        set_main_thread_affinity_for(r);  // what the helper process inherits
        settle();
        announce(*b, std::string(name(r)) + " (helper process, every thread count)");
        for (record& rec : run_helper(*b, o.threads, o.reps)) {
          add(std::move(rec));
        }
      }
    }
#endif
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - suite_start).count();

  const auto failed = static_cast<std::size_t>(
      std::count_if(records.begin(), records.end(), [](const record& r) { return !r.ok(); }));
  if (!o.emit_records) {
    print_table(std::cout, records);
    char summary[160];
    std::snprintf(summary, sizeof summary, "%zu records, %s, %.1f s wall", records.size(),
                  failed == 0 ? "every check ok" : (std::to_string(failed) + " FAILED").c_str(),
                  wall);
    std::cout << summary << std::endl;
  }
  if (json.is_open()) {
    write_json(json, records);
    json.close();
    if (!json) {
      std::cerr << "strata-bench: --json '" << json_path << "': write failed\n";
      return 1;
    }
  }
  if (!o.plot_dir.empty() && !o.emit_records && !write_plots(o.plot_dir, json_path, o.threads)) return 1;
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace strata_bench

int main(int argc, char** argv) {
  using namespace strata_bench;
  options o;
  // Before the command line: libgomp may have pinned this thread to one CPU
  // already (OMP_PROC_BIND, main.cpp's default), and the default thread
  // list counts the process's CPUs, not that one.
  remember_main_thread_affinity();
  try {
    o = parse_cli(argc, argv, process_cpus());
  } catch (const cli_error& e) {
    std::cerr << "strata-bench: " << e.what() << "\n(strata-bench --help shows the usage)\n";
    return 2;
  }
  if (!o.help && !o.list && !o.placement_report) {
    default_openmp_binding(argv, o.emit_records);
  }
  return run(o);
}
