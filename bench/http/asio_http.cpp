// asio-http: strata-http written with Boost.Asio the way a C++ user would,
// one io_context per thread: the usual C++ choice, the peer of strata-http in
// seed 003's latency benchmark (one load generator drives both).
//
//   asio-http [--port N] [--workers P] [--delay-us D] [--requests N]
//
// P threads each run their own io_context. The acceptor lives on context 0
// and accepts each connection straight onto context k (round robin), where it
// stays: its reads, its timer and its writes all run on that thread. Every
// complete request (up to the blank line; bodies are not supported) is
// answered after a mock delay on the connection's steady_timer (1 ms by
// default, 0: at once). A request whose target carries "cpu=US"
// (GET /?cpu=200) first costs US microseconds of CPU work, spun inline on the
// connection's thread (an io_context has no one to hand it to); "tasks=K"
// beside it makes that K times as much, one piece after the other. Requests are
// answered in order: their deadlines queue on one timer per connection. A
// request that is not GET or HEAD, or a header over 8 KiB, is answered 400
// after the requests before it, and the connection closes (counted as bad).
// It prints "asio-http: listening on 127.0.0.1:PORT" once ready, serves until
// SIGINT/SIGTERM (or --requests answered), then prints what it served.
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>  // before Boost 1.74's asio/awaitable.hpp, which uses std::exchange unincluded
#include <vector>

#include <boost/asio.hpp>

#include "http_common.hpp"

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

std::atomic<std::uint64_t> g_answered{0}, g_connections{0}, g_bad{0};

using http_common::k_bad;
using http_common::k_max_header;
using http_common::k_response;

// The contexts and what stops them (io_context::stop is thread safe).
struct server {
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::uint64_t stop_after = 0;  // answers, 0: no limit

  void stop() {
    for (auto& c : contexts) c->stop();
  }
};

// One connection, owned by its context's thread (every member is touched there only).
struct connection : std::enable_shared_from_this<connection> {
  using clock = std::chrono::steady_clock;

  server& srv;
  tcp::socket socket;
  asio::steady_timer timer;
  std::chrono::microseconds delay;
  std::array<char, 4096> buf{};
  std::string in, out, sending;  // sending: the bytes of the write in flight
  std::deque<clock::time_point> due;  // the deadlines of the requests on the timer, in order
  bool writing = false, timer_armed = false;
  bool closing = false;  // a bad request came: no more reads; the 400 follows the answers due
  bool closed = false;

  connection(server& s, tcp::socket sock, std::chrono::microseconds d)
      : srv(s), socket(std::move(sock)), timer(socket.get_executor()), delay(d) {}

  void start() { read(); }

  void read() {
    auto self = shared_from_this();
    socket.async_read_some(asio::buffer(buf), [self](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return self->close_now();  // EOF, reset or aborted
      self->in.append(self->buf.data(), n);
      self->on_input();
    });
  }

  void on_input() {
    if (closed || closing) return;
    std::size_t end;
    while ((end = in.find("\r\n\r\n")) != std::string::npos) {
      const bool get = in.compare(0, 4, "GET ") == 0 || in.compare(0, 5, "HEAD ") == 0;
      const std::string line = get ? in.substr(0, in.find("\r\n")) : std::string();
      const long cpu_us = get ? http_common::cpu_of(line) : 0;
      const long tasks = get ? http_common::tasks_of(line) : 1;
      in.erase(0, end + 4);
      if (!get) return bad_request();
      for (long i = 0; cpu_us > 0 && i < tasks; ++i) http_common::spin_for(cpu_us);
      if (delay.count() == 0) {
        respond();
      } else {
        due.push_back(clock::now() + delay);
        if (!timer_armed) arm();
      }
    }
    if (in.size() > k_max_header) return bad_request();
    flush();
    read();
  }

  // The timer waits for the oldest deadline; when it fires it answers every
  // request now due (deadlines only grow: the order is kept) and rearms.
  void arm() {
    timer_armed = true;
    timer.expires_at(due.front());
    auto self = shared_from_this();
    timer.async_wait([self](const boost::system::error_code& ec) {
      self->timer_armed = false;
      if (ec || self->closed) return;
      const auto now = clock::now();
      while (!self->due.empty() && self->due.front() <= now) {
        self->due.pop_front();
        self->respond();
      }
      if (!self->due.empty()) {
        self->arm();
      } else if (self->closing) {
        self->out += k_bad;  // after the answers to the requests before the bad one
      }
      self->flush();
    });
  }

  void respond() {
    out += k_response;
    const std::uint64_t n = g_answered.fetch_add(1, std::memory_order_relaxed) + 1;  // relaxed: statistics
    if (srv.stop_after != 0 && n == srv.stop_after) srv.stop();
  }

  // HTTP/1.1 answers in request order: the requests before the bad one are
  // answered first (their deadlines stay on the timer), then the 400, then
  // the connection closes once that is written. Nothing more is read.
  void bad_request() {
    g_bad.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
    closing = true;
    in.clear();
    if (due.empty()) out += k_bad;
    flush();
  }

  // One write at a time; what is answered meanwhile goes out with the next one.
  void flush() {
    if (writing || closed || out.empty()) return;
    writing = true;
    sending.swap(out);
    auto self = shared_from_this();
    asio::async_write(socket, asio::buffer(sending), [self](const boost::system::error_code& ec, std::size_t) {
      self->writing = false;
      self->sending.clear();
      if (ec) return self->close_now();
      if (!self->out.empty()) return self->flush();
      if (self->closing && self->due.empty()) self->close_now();  // the 400 was in this write
    });
  }

  void close_now() {
    if (closed) return;
    closed = true;
    boost::system::error_code ignored;
    timer.cancel();
    socket.close(ignored);
  }
};

// Accepts on context 0, each connection onto the next context round robin.
void accept_next(server& srv, tcp::acceptor& acceptor, std::chrono::microseconds delay, unsigned next) {
  asio::io_context& home = *srv.contexts[next % srv.contexts.size()];
  acceptor.async_accept(home, [&srv, &acceptor, &home, delay, next](const boost::system::error_code& ec,
                                                                    tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      g_connections.fetch_add(1, std::memory_order_relaxed);  // relaxed: statistics
      auto c = std::make_shared<connection>(srv, std::move(socket), delay);
      asio::post(home, [c] { c->start(); });  // the connection lives on its own context from here on
    }
    accept_next(srv, acceptor, delay, next + 1);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const http_common::server_args args = http_common::parse_server_args("asio-http", argc, argv);
  const long port = args.port;
  const long delay_us = args.delay_us;
  const long stop_after = args.requests;
  long threads = args.workers;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());

  server srv;
  srv.stop_after = static_cast<std::uint64_t>(stop_after);
  for (long i = 0; i < threads; ++i) srv.contexts.push_back(std::make_unique<asio::io_context>(1));
  {
    asio::io_context& first = *srv.contexts[0];
    tcp::acceptor acceptor(first);
    const tcp::endpoint at(asio::ip::address_v4::loopback(), static_cast<unsigned short>(port));
    boost::system::error_code ec;
    acceptor.open(at.protocol(), ec);
    if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor.bind(at, ec);
    if (!ec) acceptor.listen(1024, ec);
    if (ec) {
      std::fprintf(stderr, "asio-http: cannot listen on 127.0.0.1:%ld: %s\n", port, ec.message().c_str());
      return 1;
    }
    const auto delay = std::chrono::microseconds(delay_us);
    accept_next(srv, acceptor, delay, 0);
    signal(SIGPIPE, SIG_IGN);
    asio::signal_set signals(first, SIGINT, SIGTERM);
    signals.async_wait([&srv](const boost::system::error_code& e, int) {
      if (!e) srv.stop();
    });

    std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
    std::vector<std::thread> pool;
    for (auto& c : srv.contexts) {
      guards.push_back(asio::make_work_guard(*c));
      pool.emplace_back([&ctx = *c] { ctx.run(); });
    }
    std::printf("asio-http: listening on 127.0.0.1:%u, %ld threads, delay %ld us\n",
                static_cast<unsigned>(acceptor.local_endpoint().port()), threads, delay_us);
    std::fflush(stdout);
    for (auto& t : pool) t.join();  // run() returns once stop() was called
    std::printf("asio-http: %llu connections, %llu requests answered, %llu bad\n",
                static_cast<unsigned long long>(g_connections.load()),
                static_cast<unsigned long long>(g_answered.load()), static_cast<unsigned long long>(g_bad.load()));
    std::fflush(stdout);
  }  // the acceptor and the signal set go first (context 0 still holds the pending accept)
  // Context 0 before the others: its pending accept holds a socket of the next context.
  // Open connections go with their contexts (their pending handlers are destroyed).
  for (auto& c : srv.contexts) c.reset();
  return 0;
}
