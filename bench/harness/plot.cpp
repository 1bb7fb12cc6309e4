// --plot DIR (design in plot.hpp).
#include "harness/plot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
#include <strata/strata.hpp>
#endif

namespace strata_bench {
namespace {

// The script beside the sources this binary was built from, unless
// STRATA_BENCH_PLOT_SCRIPT names another (an installed copy).
std::string plot_script() {
  if (const char* s = std::getenv("STRATA_BENCH_PLOT_SCRIPT"); s != nullptr && *s != '\0') return s;
#ifdef STRATA_BENCH_PLOT_SCRIPT
  return STRATA_BENCH_PLOT_SCRIPT;
#else
  return "";
#endif
}

void write_machine(const std::string& dir, const std::vector<unsigned>& threads) {
#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
  try {
    strata::config c = strata::config::from_env();
    if (!threads.empty()) c.workers = *std::max_element(threads.begin(), threads.end());
    c.oversubscribe = true;
    std::ofstream(dir + "/machine.txt") << strata::placement_plan::compute(c).describe();
  } catch (const std::exception& e) {
    std::ofstream(dir + "/machine.txt") << "strata could not describe the machine: " << e.what() << "\n";
  }
#else
  (void)threads;
  std::ofstream(dir + "/machine.txt") << "(strata is not built into this strata-bench)\n";
#endif
}

}  // namespace

std::string prepare_plot_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return "cannot create the directory: " + ec.message();
  if (access(dir.c_str(), W_OK) != 0) return "the directory is not writable";
  return "";
}

bool write_plots(const std::string& dir, const std::string& json_path, const std::vector<unsigned>& threads) {
  write_machine(dir, threads);
  const std::string script = plot_script();
  if (script.empty() || access(script.c_str(), R_OK) != 0) {
    std::cerr << "strata-bench: --plot: no plot script ('" << script
              << "'); set STRATA_BENCH_PLOT_SCRIPT to tools/plot_bench.py\n";
    return false;
  }
  // Debian's interpreter: python3-matplotlib is installed for it.
  const char* python = std::getenv("STRATA_PYTHON") != nullptr ? std::getenv("STRATA_PYTHON") : "/usr/bin/python3";
  std::cout.flush();
  const pid_t pid = fork();
  if (pid == 0) {
    execl(python, python, script.c_str(), json_path.c_str(), dir.c_str(), static_cast<char*>(nullptr));
    std::cerr << "strata-bench: --plot: cannot run " << python << "\n";
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::cerr << "strata-bench: --plot: " << script << " failed (status " << status << ")\n";
    return false;
  }
  return true;
}

}  // namespace strata_bench
