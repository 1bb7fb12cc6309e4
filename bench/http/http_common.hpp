// What strata-http and asio-http share, so that one load generator drives
// both and they differ only in their scheduling: the answers, the request
// line's CPU work parameters, and the command line
//
//   PROGRAM [--port N] [--workers P] [--delay-us D] [--requests N]
//
// (a bad value: a message naming it and the accepted range, exit 2).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace http_common {

inline constexpr char k_response[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n";
inline constexpr char k_bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
inline constexpr std::size_t k_max_header = 8192;

// "cpu=US" in the request line: US microseconds (at most 10^6), else 0.
inline long cpu_of(const std::string& line) {
  const std::size_t at = line.find("cpu=");
  if (at == std::string::npos) return 0;
  const long v = std::strtol(line.c_str() + at + 4, nullptr, 10);
  return v < 0 ? 0 : (v > 1000000 ? 1000000 : v);
}

// "tasks=K" in the request line: the CPU work is K pieces of cpu_of's
// microseconds each (1 to 1000; 1 when absent or out of range).
inline long tasks_of(const std::string& line) {
  const std::size_t at = line.find("tasks=");
  if (at == std::string::npos) return 1;
  const long v = std::strtol(line.c_str() + at + 6, nullptr, 10);
  return v < 1 || v > 1000 ? 1 : v;
}

// The request's CPU work: a busy wait on this thread.
inline void spin_for(long us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct server_args {
  long port = 0;        // 0: any free port (printed in the "listening on" line)
  long workers = 0;     // 0: the program's default
  long delay_us = 1000; // the mock delay of every answer
  long requests = 0;    // stop after this many answers; 0: at SIGINT/SIGTERM
};

inline server_args parse_server_args(const char* program, int argc, char** argv) {
  server_args a;
  for (int i = 1; i < argc; i += 2) {
    const char* name = argv[i];
    long* to = nullptr;
    long hi = 0;
    if (std::strcmp(name, "--port") == 0) {
      to = &a.port, hi = 65535;
    } else if (std::strcmp(name, "--workers") == 0) {
      to = &a.workers, hi = 4096;
    } else if (std::strcmp(name, "--delay-us") == 0) {
      to = &a.delay_us, hi = 10000000;
    } else if (std::strcmp(name, "--requests") == 0) {
      to = &a.requests, hi = 1L << 40;
    }
    if (to == nullptr || i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s [--port N] [--workers P] [--delay-us D] [--requests N]\n", program);
      std::exit(2);
    }
    char* end = nullptr;
    const long v = std::strtol(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v < 0 || v > hi) {
      std::fprintf(stderr, "%s: %s '%s': accepted: 0 to %ld\n", program, name, argv[i + 1], hi);
      std::exit(2);
    }
    *to = v;
  }
  return a;
}

}  // namespace http_common
