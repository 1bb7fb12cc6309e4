// Test support: run a shell command line, capture stdout and stderr
// (merged) and the exit status.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace strata::test {

struct command_result {
  int status = -1;  // exit code, or -1 if it did not exit normally
  std::string output;
};

inline command_result run_command(const std::string& cmd) {
  command_result r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) throw std::runtime_error("popen failed for: " + cmd);
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace strata::test
