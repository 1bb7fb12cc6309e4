// libFuzzer target: strata-bench's command line. An input is split at NUL
// bytes into arguments (at most 16) after "strata-bench"; parse_cli returns
// options or throws cli_error, whose message main() prints before exiting 2.
// Run by tools/fuzz/run.sh bench_cli.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args{"strata-bench"};
  std::string current;
  for (std::size_t i = 0; i < size && args.size() < 17; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && args.size() < 17) args.push_back(current);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  try {
    const strata_bench::options o = strata_bench::parse_cli(static_cast<int>(args.size()), argv.data(), 2);
    if (o.reps == 0 || o.threads.empty()) __builtin_trap();  // never a configuration that cannot run
  } catch (const strata_bench::cli_error& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  return 0;
}
