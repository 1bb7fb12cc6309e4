#include "harness/helper_process.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <optional>

#include "harness/report.hpp"

extern char** environ;

namespace strata_bench {
namespace {

std::string helper_path() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(".") : self.parent_path();
  return (dir / STRATA_BENCH_OMP_LLVM_HELPER).string();
}

std::string join(const std::vector<unsigned>& v) {
  std::string s;
  for (unsigned x : v) {
    if (!s.empty()) {
      s += ',';
    }
    s += std::to_string(x);
  }
  return s;
}

struct helper_output {
  std::string stdout_text;
  std::string failure;  // empty: exited 0 or 1 (1 = a check failed, reported in its records)
};

helper_output run_and_capture(const std::vector<std::string>& args) {
  helper_output out;
  int fds[2];
  if (pipe(fds) != 0) {
    out.failure = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> argv;
  for (const std::string& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    out.failure = "cannot start " + args[0] + ": " + std::strerror(rc);
    return out;
  }
  char buf[4096];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.stdout_text.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    out.failure = args[0] + " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                  strsignal(WTERMSIG(status)) + ")";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) > 1) {
    out.failure = args[0] + " exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return out;
}

}  // namespace

std::vector<record> run_helper(const benchmark& b, const std::vector<unsigned>& threads,
                               unsigned reps) {
  const std::string path = helper_path();
  std::string filter = "^";
  filter += b.name;
  filter += '$';
  const helper_output out = run_and_capture({path, "--emit-records", "--runtimes", "omp-llvm",
                                             "--filter", filter, "--threads", join(threads),
                                             "--reps", std::to_string(reps)});
  std::vector<record> got;
  std::size_t start = 0;
  while (start < out.stdout_text.size()) {
    std::size_t end = out.stdout_text.find('\n', start);
    if (end == std::string::npos) {
      end = out.stdout_text.size();
    }
    if (std::optional<record> r = decode_record(std::string_view(out.stdout_text).substr(start, end - start))) {
      got.push_back(std::move(*r));
    }
    start = end + 1;
  }
  // Per requested thread count, in the requested order, the helper's records
  // of that count (one per version of the benchmark), or one FAIL record.
  std::vector<record> records;
  for (unsigned p : threads) {
    const std::size_t before = records.size();
    std::copy_if(got.begin(), got.end(), std::back_inserter(records), [&](const record& r) {
      return r.threads == p && r.bench == b.name && r.runtime == "omp-llvm";
    });
    if (records.size() == before) {
      record r = blank_record(b, runtime_id::omp_llvm, p);
      r.check = "FAIL: no record from the helper: " +
                (out.failure.empty() ? path + " printed none" : out.failure);
      records.push_back(std::move(r));
    }
  }
  return records;
}

}  // namespace strata_bench
