// strata-bench: one harness for strata and its peers (serial, oneTBB, GNU
// libgomp, LLVM libomp through a helper process). See bench/README.md.
//
// For each selected benchmark, each runtime in the order serial, strata,
// tbb, omp, omp-llvm, and each thread count (serial: once, 1 thread):
// prepare outside the timed region, 1 warm-up run, N timed runs, teardown;
// then the table on stdout and, with --json, the JSON array. Exit status 0
// when every check is ok, 1 when one failed, 2 on a bad command line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>
#include <vector>

#include "harness/cli.hpp"
#include "harness/measure.hpp"
#include "harness/report.hpp"
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
#include "harness/helper_process.hpp"
#endif

namespace strata_bench {
namespace {

// Pause before each configuration (and each helper run) so the threads of
// the previous runtime (libgomp and oneTBB spin a while after parallel work)
// have gone idle.
constexpr std::chrono::milliseconds k_settle{100};

void print_list(std::ostream& out) {
  out << "benchmarks:\n";
  for (const benchmark& b : suite()) {
    out << "  " << b.name << std::string(10 - std::min<std::size_t>(9, b.name.size()), ' ') << b.params
        << "\n            " << b.summary << "\n";
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
  if (!o.json_path.empty()) {
    json.open(o.json_path);
    if (!json) {
      std::cerr << "strata-bench: --json '" << o.json_path << "': cannot open the file for writing\n";
      return 2;
    }
  }

  const auto suite_start = std::chrono::steady_clock::now();
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
  for (const benchmark* b : benches) {
    for (runtime_id r : runtimes) {
      const std::vector<unsigned> threads =
          r == runtime_id::serial ? std::vector<unsigned>{1} : o.threads;
#if defined(STRATA_BENCH_OMP_LLVM_HELPER)
      if (support(r).how == availability::helper) {
        settle();
        for (record& rec : run_helper(*b, threads, o.reps)) {
          add(std::move(rec));
        }
        continue;
      }
#endif
      for (unsigned p : threads) {
        settle();
        add(measure(*b, r, p, o.reps));
      }
    }
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
      std::cerr << "strata-bench: --json '" << o.json_path << "': write failed\n";
      return 1;
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace strata_bench

int main(int argc, char** argv) {
  using namespace strata_bench;
  options o;
  try {
    o = parse_cli(argc, argv, usable_cpus());
  } catch (const cli_error& e) {
    std::cerr << "strata-bench: " << e.what() << "\n(strata-bench --help shows the usage)\n";
    return 2;
  }
  return run(o);
}
