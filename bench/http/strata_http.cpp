// strata-http: a minimal HTTP/1.1 keep-alive server on strata's event loops
// (seed 003), the server side of the latency benchmark.
//
//   strata-http [--port N] [--workers P] [--delay-us D] [--requests N]
//
// The listening socket is watched on worker 0; each accepted connection is
// handed round robin to a worker and stays there: its reads, its timers and
// its writes all run on that worker's loop. Every complete request (up to
// the blank line; bodies are not supported) is answered after a mock delay
// on the worker's timer (1 ms by default, 0: at once). A request that is not
// GET or HEAD, or a header over 8 KiB, is answered 400 after the requests
// before it, and the connection closes (counted as bad). A request whose
// target carries "cpu=US" (GET /?cpu=200) first costs US microseconds of CPU
// work, run as a task spawned on the connection's worker: it goes where the
// policy (STRATA_POLICY) sends spawned work (stolen under tiered_stealing,
// kept home under pinned_mpsc, spilled beyond the bound under hybrid), and
// hands the answer back to the connection's worker. "tasks=K" beside it
// (GET /?cpu=50&tasks=10) makes the work K such tasks, spawned together (a
// handler that fans out); the last to finish hands the answer back. Every answer is the same
// bytes, so answers that finish out of order still read right.
// It prints "strata-http: listening on 127.0.0.1:PORT" once ready, serves
// until SIGINT/SIGTERM (or --requests answered), then prints what it served.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <strata/io/event_loop.hpp>
#include <strata/strata.hpp>

#include "http_common.hpp"

namespace {

std::atomic<bool> g_stop{false};
std::atomic<std::uint64_t> g_answered{0}, g_connections{0}, g_bad{0};

using http_common::k_bad;
using http_common::k_max_header;
using http_common::k_response;

// One connection, owned by its worker's loop (every member is touched there only).
struct connection : std::enable_shared_from_this<connection> {
  strata::runtime& rt;
  unsigned home = 0;  // the worker whose loop owns this connection
  int fd;
  std::chrono::microseconds delay;
  std::string in, out;
  strata::io::watch_id watch{};
  long owed = 0;         // requests read and not yet answered
  bool closing = false;  // a bad request came: unwatched; the 400 follows the answers owed
  bool closed = false;
  bool retry_armed = false;

  connection(strata::runtime& r, int f, std::chrono::microseconds d) : rt(r), fd(f), delay(d) {}

  void start() {
    home = strata::this_worker()->value;
    auto self = shared_from_this();
    watch = strata::io::this_loop().watch(fd, strata::io::readable, [self](std::uint32_t) { self->on_readable(); });
  }

  void on_readable() {
    char buf[4096];
    for (;;) {
      const ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) {
        in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) return close_now();
      if (errno == EAGAIN) break;
    }
    std::size_t end;
    while ((end = in.find("\r\n\r\n")) != std::string::npos) {
      const bool get = in.compare(0, 4, "GET ") == 0 || in.compare(0, 5, "HEAD ") == 0;
      const std::string line = get ? in.substr(0, in.find("\r\n")) : std::string();
      const long cpu_us = get ? http_common::cpu_of(line) : 0;
      const long tasks = get ? http_common::tasks_of(line) : 1;
      in.erase(0, end + 4);
      if (!get) return bad_request();
      ++owed;
      if (cpu_us > 0) {
        work_then_answer(cpu_us, tasks);
      } else {
        answer();
      }
    }
    if (in.size() > k_max_header) bad_request();
  }

  // HTTP/1.1 answers in request order: the requests before the bad one are
  // answered first, then the 400, then the connection closes (after the
  // write: flush closes it once `out` is empty).
  void bad_request() {
    g_bad.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
    closing = true;
    in.clear();
    strata::io::this_loop().unwatch(watch);  // what follows a bad request is not read
    if (owed == 0) {
      out += k_bad;
      flush();
    }
  }

  // The work runs wherever the policy puts a spawned task; the answer goes
  // back to the connection's own worker (its loop owns the socket).
  void work_then_answer(long us, long tasks) {
    auto self = shared_from_this();
    // The tasks that have yet to finish; the last one answers.
    auto left = std::make_shared<std::atomic<long>>(tasks);
    for (long i = 0; i < tasks; ++i) {
      rt.spawn([self, us, left] {
        http_common::spin_for(us);
        // acq_rel: the last decrement sees every other task's work done.
        if (left->fetch_sub(1, std::memory_order_acq_rel) != 1) return;
        if (strata::this_worker()->value == self->home) return self->answer();
        (void)self->rt.submit_on(strata::worker_id{self->home}, [self] { self->answer(); });
      });
    }
  }

  void answer() {
    if (delay.count() == 0) return respond();
    auto self = shared_from_this();
    strata::io::this_loop().after(delay, [self] { self->respond(); });
  }

  void respond() {
    if (closed) return;
    out += k_response;
    g_answered.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
    if (--owed == 0 && closing) out += k_bad;
    flush();
  }

  // Writes what it can; the rest is retried shortly on the same worker
  // (responses are tiny: a full socket buffer is rare).
  void flush() {
    while (!out.empty() && !closed) {
      const ssize_t n = write(fd, out.data(), out.size());
      if (n > 0) {
        out.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && errno == EAGAIN) {
        if (!retry_armed) {
          retry_armed = true;
          auto self = shared_from_this();
          strata::io::this_loop().after(std::chrono::microseconds(50), [self] {
            self->retry_armed = false;
            self->flush();
          });
        }
        return;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        return close_now();
      }
    }
    // The 400 is out (owed == 0 once it was appended): nothing more to say.
    if (out.empty() && closing && owed == 0) close_now();
  }

  void close_now() {
    if (closed) return;
    closed = true;
    strata::io::this_loop().unwatch(watch);
    close(fd);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const http_common::server_args args = http_common::parse_server_args("strata-http", argc, argv);
  const long port = args.port;
  const long delay_us = args.delay_us;
  const long stop_after = args.requests;
  strata::config c = strata::config::from_env();
  if (args.workers > 0) c.workers = static_cast<unsigned>(args.workers);
  strata::runtime rt{c};

  const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(lfd, 1024) != 0) {
    std::fprintf(stderr, "strata-http: cannot listen on 127.0.0.1:%ld: %s\n", port, std::strerror(errno));
    return 1;
  }
  socklen_t len = sizeof addr;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  const auto delay = std::chrono::microseconds(delay_us);
  const unsigned workers = rt.num_workers();
  auto next = std::make_shared<unsigned>(0);  // round robin, touched on worker 0 only
  auto on_accept = [&rt, lfd, delay, workers, next](std::uint32_t) {
    for (;;) {
      const int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN: all taken
      const int nodelay = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
      g_connections.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      const unsigned w = (*next)++ % workers;
      // The connection lives on worker w from here on (the future is not waited for).
      (void)rt.submit_on(strata::worker_id{w},
                         [&rt, fd, delay] { std::make_shared<connection>(rt, fd, delay)->start(); });
    }
  };
  strata::io::loop_of(rt, strata::worker_id{0}).watch(lfd, strata::io::readable, on_accept);
  signal(SIGPIPE, SIG_IGN);
  struct sigaction sa{};
  sa.sa_handler = [](int) { g_stop.store(true); };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::printf("strata-http: listening on 127.0.0.1:%u, %u workers, delay %ld us\n", ntohs(addr.sin_port), workers,
              delay_us);
  std::fflush(stdout);
  while (!g_stop.load() && (stop_after == 0 || g_answered.load() < static_cast<std::uint64_t>(stop_after))) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("strata-http: %llu connections, %llu requests answered, %llu bad\n",
              static_cast<unsigned long long>(g_connections.load()), static_cast<unsigned long long>(g_answered.load()),
              static_cast<unsigned long long>(g_bad.load()));
  std::printf("%s\n", rt.stats().to_json().c_str());
  std::fflush(stdout);
  close(lfd);
  rt.shutdown();  // waits for answers still on their timers; open connections go with their loops
  return 0;
}
