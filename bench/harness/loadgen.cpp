// The open-loop load generator (loadgen.hpp tells the schedule and why).
#include "harness/loadgen.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace strata_bench {
namespace {

using clock_type = std::chrono::steady_clock;

struct conn {
  int fd = -1;
  std::uint64_t k = 0;               // its next request is its k-th
  bool outstanding = false;
  clock_type::time_point intended;   // of the outstanding request
  std::string request;               // the bytes of its requests (the same every time)
  std::string in;
  bool dead = false;
};

int connect_to(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("loadgen: socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = std::strerror(errno);
    close(fd);
    throw std::runtime_error("loadgen: cannot connect to 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Complete answers at the front of c.in, removed; -1: malformed. Sets
// *ok_all false when one was not a 200.
int take_answers(conn& c, bool* ok_all) {
  int n = 0;
  for (;;) {
    const std::size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) return c.in.size() > 8192 ? -1 : n;
    const std::string head = c.in.substr(0, end);
    std::size_t body = 0;
    if (const std::size_t at = head.find("Content-Length: "); at != std::string::npos) {
      body = std::strtoul(head.c_str() + at + 16, nullptr, 10);
    } else {
      return -1;
    }
    if (c.in.size() < end + 4 + body) return n;
    if (head.compare(0, 12, "HTTP/1.1 200") != 0) *ok_all = false;
    c.in.erase(0, end + 4 + body);
    ++n;
  }
}

}  // namespace

double load_result::percentile(double p) const noexcept {
  if (latency_us.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(latency_us.size()));
  const std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return latency_us[std::min(i, latency_us.size() - 1)];
}

load_result run_load(const load_spec& spec) {
  if (spec.connections == 0 || !(spec.rate > 0)) throw std::invalid_argument("loadgen: no connections or no rate");
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) throw std::runtime_error(std::string("loadgen: epoll_create1: ") + std::strerror(errno));
  std::vector<conn> conns(spec.connections);
  struct closer {
    int ep;
    std::vector<conn>& cs;
    ~closer() {
      for (auto& c : cs) {
        if (c.fd >= 0) close(c.fd);
      }
      close(ep);
    }
  } close_all{ep, conns};
  for (std::size_t i = 0; i < conns.size(); ++i) {
    conn& c = conns[i];
    c.fd = connect_to(spec.port);
    const bool heavy = i == 0 && spec.heavy_cpu_us > 0;
    const long cpu = heavy ? spec.heavy_cpu_us : spec.cpu_us;
    const std::string fan = heavy && spec.heavy_tasks > 1 ? "&tasks=" + std::to_string(spec.heavy_tasks) : "";
    c.request = "GET /" + (cpu > 0 ? "?cpu=" + std::to_string(cpu) + fan : std::string()) +
                " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
  }
  const auto n = static_cast<double>(conns.size());
  const auto period = std::chrono::duration<double>(n / spec.rate);  // between two requests of one connection
  const auto start = clock_type::now() + std::chrono::milliseconds(5);
  const auto window_begin = start + spec.warmup;
  const auto window_end = window_begin + spec.measure;
  // Request k of connection i is due at start + (k * n + i) / rate.
  auto due = [&](std::size_t i, std::uint64_t k) {
    return start + std::chrono::duration_cast<clock_type::duration>(
                       period * (static_cast<double>(k) + static_cast<double>(i) / n));
  };
  load_result r;
  r.window_s = std::chrono::duration<double>(spec.measure).count();
  bool ok_all = true;
  auto send_due = [&](clock_type::time_point now) {
    clock_type::time_point next = clock_type::time_point::max();
    for (std::size_t i = 0; i < conns.size(); ++i) {
      conn& c = conns[i];
      if (c.outstanding || c.dead) continue;
      const auto when = due(i, c.k);
      if (when >= window_end) continue;  // the schedule is over for this connection
      if (when > now) {
        next = std::min(next, when);
        continue;
      }
      const ssize_t w = send(c.fd, c.request.data(), c.request.size(), MSG_NOSIGNAL);
      if (w != static_cast<ssize_t>(c.request.size())) {  // a tiny request on an idle socket: all or error
        c.dead = true;
        ++r.errors;
        continue;
      }
      c.outstanding = true;
      c.intended = when;
      ++r.sent;
    }
    return next;
  };
  std::vector<epoll_event> events(conns.size());
  const auto drain_until = window_end + std::chrono::seconds(2);
  for (;;) {
    const auto now = clock_type::now();
    const auto next = send_due(now);
    const bool busy = std::any_of(conns.begin(), conns.end(), [](const conn& c) { return c.outstanding; });
    if (now >= drain_until || (!busy && next == clock_type::time_point::max())) break;
    const auto wait_until = std::min(next, drain_until);
    const auto wait = std::max(wait_until - now, clock_type::duration::zero());
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    const int got = epoll_pwait2(ep, events.data(), static_cast<int>(events.size()), &ts, nullptr);
    if (got < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("loadgen: epoll_pwait2: ") + std::strerror(errno));
    }
    const auto at = clock_type::now();
    for (int e = 0; e < got; ++e) {
      conn& c = conns[events[static_cast<std::size_t>(e)].data.u64];
      char buf[4096];
      const ssize_t m = read(c.fd, buf, sizeof buf);
      if (m <= 0) {
        if (m < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        throw std::runtime_error("loadgen: the server closed a connection (" +
                                 std::string(m == 0 ? "end of stream" : std::strerror(errno)) + ")");
      }
      c.in.append(buf, static_cast<std::size_t>(m));
      const int answers = take_answers(c, &ok_all);
      if (answers < 0) throw std::runtime_error("loadgen: a malformed answer: '" + c.in.substr(0, 80) + "'");
      if (answers > 1 || (answers == 1 && !c.outstanding)) throw std::runtime_error("loadgen: an unasked answer");
      if (answers == 1) {
        c.outstanding = false;
        ++c.k;
        ++r.answered;
        if (c.intended >= window_begin && c.intended < window_end) {
          r.latency_us.push_back(std::chrono::duration<double, std::micro>(at - c.intended).count());
        }
      }
    }
  }
  if (!ok_all) throw std::runtime_error("loadgen: the server answered with a status other than 200");
  for (std::size_t i = 0; i < conns.size(); ++i) {
    for (std::uint64_t k = conns[i].k + (conns[i].outstanding ? 1 : 0); due(i, k) < window_end; ++k) ++r.unsent;
  }
  std::sort(r.latency_us.begin(), r.latency_us.end());
  return r;
}

}  // namespace strata_bench
