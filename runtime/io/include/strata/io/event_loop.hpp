// strata::io: an event loop per worker (seed 003): file descriptors and
// timers whose handlers run on one worker, between its tasks.
//
//   strata::io::event_loop& loop = strata::io::loop_of(rt, strata::worker_id{1});
//   auto w = loop.watch(fd, strata::io::readable, [](std::uint32_t ev) { ... });  // on worker 1
//   loop.after(std::chrono::milliseconds(1), [] { ... });                          // a timer, on worker 1
//   strata::io::this_loop().after(...);   // inside a task or handler: the calling worker's loop
//
// Each worker owns an epoll instance (with an eventfd and a timerfd in it).
// While the worker has tasks it polls the epoll set without blocking at most
// every config.io_poll_us (50 µs by default), at its fairness polls; when it
// has nothing to do its park is the epoll wait itself, so a ready descriptor
// or a due timer wakes it directly, and a task posted to it from another
// thread writes the eventfd only if the worker is actually parked (the
// core's sleeping word decides who wakes it: parking.cpp). A timer due
// within 20 µs is waited for by polling instead (io_timer_spins in stats()).
//
// Handlers and timer callbacks run on the loop's worker, one at a time; an
// exception leaving one is counted and reported like a detached task's, and
// the loop goes on. Descriptors are level-triggered. A pending timer is work
// in flight: wait_idle (and so shutdown) waits for it to fire or be
// cancelled. Calls from any thread are allowed; those made off the loop's
// worker are handed to it and take effect when it next looks (watch adds
// the descriptor to the epoll set at once, so that it can fail at once).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include <strata/runtime/runtime.hpp>

namespace strata::io {

inline constexpr std::uint32_t readable = 0x001;  // EPOLLIN
inline constexpr std::uint32_t writable = 0x004;  // EPOLLOUT
inline constexpr std::uint32_t hangup = 0x010;    // EPOLLHUP (always reported)
inline constexpr std::uint32_t error = 0x008;     // EPOLLERR (always reported)

struct watch_id {
  std::uint64_t value = 0;
};
struct timer_id {
  std::uint64_t value = 0;
};

class event_loop {
 public:
  virtual ~event_loop() = default;
  // The worker whose thread runs this loop's handlers.
  virtual worker_id worker() const noexcept = 0;
  // Calls handler(events) on the loop's worker while fd is ready for
  // `events` (readable, writable). Throws usage_error when epoll refuses fd
  // (not open, a regular file, already watched), naming it and why.
  virtual watch_id watch(int fd, std::uint32_t events, std::function<void(std::uint32_t)> handler) = 0;
  // No new calls of the watch's handler once the loop's worker has seen it
  // (at once from that worker). Unknown ids are ignored.
  virtual void unwatch(watch_id id) = 0;
  // Runs fn on the loop's worker no earlier than `delay` from now. Timers
  // run in deadline order (equal deadlines in the order they were set) among
  // those the loop holds; one set from another thread joins when the loop
  // takes its command, and may so follow a timer due later that ran first.
  virtual timer_id after(std::chrono::nanoseconds delay, std::function<void()> fn) = 0;
  // The timer does not run if the loop sees the cancel before it is due.
  virtual void cancel(timer_id id) = 0;
};

// The event loop of worker w of rt, attached to the runtime on first use
// (every worker gets one). Throws usage_error for a worker rt does not have.
event_loop& loop_of(runtime& rt, worker_id w);
// The loop of the calling worker (usage_error off the workers).
event_loop& this_loop();

}  // namespace strata::io
