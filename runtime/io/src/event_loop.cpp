// The per-worker event loop: a work source that also supplies the worker's
// idle wait (design in <strata/io/event_loop.hpp>).
//
// Ownership. Everything in a loop (the watch table, the timer heap, the
// buffered epoll events) is touched by its worker's thread only. Another
// thread hands it commands through `m_commands` (under `m_command_mutex`;
// `m_has_commands` is set with release after the push and taken with an
// acquire exchange by the owner), then calls notify_worker, which fences and
// wakes the worker if it sleeps: the parking protocol's re-check asks
// ready(), which reads m_has_commands, so a command is never left waiting
// on a parked worker.
//
// Watches. watch() installs the handler (directly on the owner, else by
// command) before it adds fd to the epoll set from the calling thread, so
// that the call can fail at once with epoll's reason. An event can then
// reach the owner before its install command has been applied: a lookup
// that misses applies the pending commands and looks again (the command
// was pushed, under the mutex, before epoll_ctl made the event possible).
// unwatch() is a command like the others (only the owner knows the fd of a
// watch id): the owner removes fd from the set and the handler together,
// before it fetches events again (poll applies commands first).
//
// Idle wait. The owner's park is epoll_wait(-1) on its set, which holds an
// eventfd (written by wake_idle: the core calls it only for a worker it
// claimed from the sleeping state, so concurrent producers do not each pay
// a write) and a timerfd armed to the earliest timer. Descriptor readiness
// needs no wake-up at all: a descriptor that became ready before the wait
// makes it return at once (level-triggered), so ready() need not poll the
// kernel, only say whether buffered events, due timers or commands wait.
// A timer due within k_timer_spin_ns is waited for by polling instead
// (spin_until), which still ends at a waker's claim or any event. The
// core's local spin, which asks ready() only, could not see a descriptor
// become ready, so parks that epoll ends never lengthen it
// (ready_sees_idle_events).
//
// Quiescence. A timer is counted created when it is set (before the call
// returns, so before the task that set it is counted finished) and finished
// when it ran or was cancelled; watches are not work.
#include <strata/io/event_loop.hpp>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/runtime/task_group.hpp>

namespace strata::io {
namespace {


using clock = std::chrono::steady_clock;

constexpr std::uint64_t k_wake_tag = 0;   // epoll data of the eventfd
constexpr std::uint64_t k_timer_tag = 1;  // epoll data of the timerfd
constexpr int k_max_events = 64;
// An idle worker whose next timer is due within this long polls until it
// instead of sleeping (spin_until): a sleep and a wake-up cost a context
// switch each way and, on a virtual machine, the wake of a halted vCPU,
// more than spinning to a deadline this near. 20 µs, measured with the HTTP
// server (bench/README.md): 50 µs took 0.2-0.3 cores more at 20000-30000
// req/s for no gain in latency; 20 µs keeps the 2000 req/s gain.
constexpr std::uint64_t k_timer_spin_ns = 20'000;

std::uint64_t ns_of(clock::time_point t) noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

[[noreturn]] void fail(const std::string& what) {
  throw runtime_error("strata::io: " + what + ": " + std::strerror(errno));
}

// Per-worker counters (owner writes, stats() reads).
struct loop_counters {
  detail::counter watches, events, timers_set, timers_fired, timers_cancelled, polls, waits, timer_spins,
      handler_errors;
};

class loop final : public event_loop, public detail::work_source {
 public:
  loop(const detail::runtime_core& rt, detail::worker& w, std::atomic<std::uint64_t>& ids,
       std::atomic<std::uint64_t>& created)
      : m_w(w), m_ids(ids), m_created(created), m_poll_ns(std::uint64_t{rt.settings.io_poll_us} * 1000) {
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    if (m_epoll < 0) fail("epoll_create1");
    m_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    m_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (m_wake < 0 || m_timer < 0) {
      close_all();
      fail("eventfd/timerfd_create");
    }
    add_internal(m_wake, k_wake_tag);
    add_internal(m_timer, k_timer_tag);
  }
  ~loop() override { close_all(); }

  // --- event_loop ---
  worker_id worker() const noexcept override { return worker_id{m_w.index}; }

  watch_id watch(int fd, std::uint32_t events, std::function<void(std::uint32_t)> handler) override {
    if (!handler) throw usage_error("strata::io::event_loop::watch: an empty handler");
    const std::uint64_t id = m_ids.fetch_add(1, std::memory_order_relaxed);  // relaxed: unique ids only
    auto e = std::make_shared<entry>(entry{fd, std::move(handler)});
    command install;
    install.kind = command::install;
    install.id = id;
    install.watch = e;
    run_or_post(std::move(install));
    epoll_event ev{};
    ev.events = events & (EPOLLIN | EPOLLOUT);
    ev.data.u64 = id;
    if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &ev) != 0) {
      const int err = errno;
      command remove;
      remove.kind = command::remove;
      remove.id = id;
      run_or_post(std::move(remove));
      throw usage_error("strata::io::event_loop::watch: fd " + std::to_string(fd) + " cannot be watched: " +
                        std::strerror(err) + "; accepted: an open socket, pipe, eventfd or timerfd not yet watched");
    }
    return watch_id{id};
  }

  void unwatch(watch_id id) override {
    command c;
    c.kind = command::remove;
    c.id = id.value;
    run_or_post(std::move(c));
  }

  timer_id after(std::chrono::nanoseconds delay, std::function<void()> fn) override {
    if (!fn) throw usage_error("strata::io::event_loop::after: an empty callback");
    const std::uint64_t id = m_ids.fetch_add(1, std::memory_order_relaxed);  // relaxed: unique ids only
    command c;
    c.kind = command::timer;
    c.id = id;
    c.deadline_ns = ns_of(clock::now()) + static_cast<std::uint64_t>(delay.count() > 0 ? delay.count() : 0);
    c.fn = std::move(fn);
    // Counted before the call returns: wait_idle must not see the creator
    // finished and the timer not yet created (subsystem.hpp).
    m_created.fetch_add(1, std::memory_order_seq_cst);  // seq_cst: read by wait_idle after the finished sums
    run_or_post(std::move(c));
    return timer_id{id};
  }

  void cancel(timer_id id) override {
    command c;
    c.kind = command::cancel;
    c.id = id.value;
    run_or_post(std::move(c));
  }

  // --- work_source (the owner's thread only) ---
  bool ready(detail::worker&) noexcept override {
    if (m_has_commands.load(std::memory_order_acquire)) return true;  // acquire: pairs with post's release
    if (m_next != m_count) return true;
    return !m_timers.empty() && m_timers.top().deadline_ns <= ns_of(clock::now());
  }

  std::size_t poll(detail::worker&, std::size_t budget) noexcept override {
    apply_commands();
    std::size_t ran = 0;
    const std::uint64_t now = ns_of(clock::now());
    if (m_next == m_count && now - m_last_poll_ns >= m_poll_ns) {
      m_last_poll_ns = now;
      m_counters.polls.add();
      fetch(0);
    }
    while (ran < budget && m_next < m_count) ran += dispatch(m_buffer[m_next++]);
    ran += fire_timers(budget > ran ? budget - ran : 1);
    return ran;
  }

  bool supplies_idle_wait() const noexcept override { return true; }
  // ready() sees due timers and commands, never the kernel's descriptor
  // readiness (see Idle wait above).
  bool ready_sees_idle_events() const noexcept override { return false; }

  void idle_wait(detail::worker& w) noexcept override {
    if (m_next != m_count) return;
    if (!m_timers.empty()) {
      const std::uint64_t due = m_timers.top().deadline_ns;
      const std::uint64_t now = ns_of(clock::now());
      if (due <= now + k_timer_spin_ns) return spin_until(w, due);
    }
    m_counters.waits.add();
    fetch(-1);
  }

  void wake_idle() noexcept override {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(m_wake, &one, sizeof one);  // EAGAIN: the counter is set already
  }

  // Timers finished (ran or cancelled), for quiescence.
  std::uint64_t finished() const noexcept { return m_counters.timers_fired.get() + m_counters.timers_cancelled.get(); }

  void add_stats(worker_stats& s) const {
    s.set_counter("io_watches", m_counters.watches.get());
    s.set_counter("io_events", m_counters.events.get());
    s.set_counter("io_timers_set", m_counters.timers_set.get());
    s.set_counter("io_timers_fired", m_counters.timers_fired.get());
    s.set_counter("io_timers_cancelled", m_counters.timers_cancelled.get());
    s.set_counter("io_polls", m_counters.polls.get());
    s.set_counter("io_waits", m_counters.waits.get());
    s.set_counter("io_timer_spins", m_counters.timer_spins.get());
    s.set_counter("io_handler_errors", m_counters.handler_errors.get());
  }

 private:
  struct entry {
    int fd;
    std::function<void(std::uint32_t)> handler;
  };
  struct command {
    enum kind_t { install, remove, timer, cancel } kind = install;
    std::uint64_t id = 0;
    std::shared_ptr<entry> watch;
    std::uint64_t deadline_ns = 0;
    std::function<void()> fn;
  };
  struct pending_timer {
    std::uint64_t deadline_ns;
    std::uint64_t id;  // ids grow: equal deadlines run in the order they were set
    std::shared_ptr<std::function<void()>> fn;
    bool operator>(const pending_timer& o) const noexcept {
      return deadline_ns != o.deadline_ns ? deadline_ns > o.deadline_ns : id > o.id;
    }
  };

  bool on_owner() const noexcept { return detail::current_worker() == &m_w; }

  void run_or_post(command&& c) {
    if (on_owner()) {
      apply_commands();  // earlier commands of other threads first
      apply(std::move(c));
      return;
    }
    {
      std::lock_guard lock(m_command_mutex);
      m_commands.push_back(std::move(c));
    }
    m_has_commands.store(true, std::memory_order_release);  // release: pairs with ready's and apply's acquire
    detail::notify_worker(m_w);
  }

  void apply_commands() noexcept {
    if (!m_has_commands.exchange(false, std::memory_order_acquire)) return;  // acquire: pairs with post's release
    std::vector<command> batch;
    {
      std::lock_guard lock(m_command_mutex);
      batch.swap(m_commands);
    }
    for (auto& c : batch) apply(std::move(c));
  }

  void apply(command&& c) noexcept {
    switch (c.kind) {
      case command::install:
        m_watches[c.id] = std::move(c.watch);
        m_counters.watches.set(m_watches.size());
        break;
      case command::remove:
        if (auto it = m_watches.find(c.id); it != m_watches.end()) {
          epoll_ctl(m_epoll, EPOLL_CTL_DEL, it->second->fd, nullptr);  // ENOENT/EBADF: already gone
          m_watches.erase(it);
          m_counters.watches.set(m_watches.size());
        }
        break;
      case command::timer:
        m_counters.timers_set.add();
        m_timers.push({c.deadline_ns, c.id, std::make_shared<std::function<void()>>(std::move(c.fn))});
        arm();
        break;
      case command::cancel:
        m_cancelled.insert(c.id);
        break;
    }
  }

  // The idle wait when the earliest timer is due within k_timer_spin_ns:
  // polls the set without blocking until an event, a waker's claim or the
  // deadline. Ends as soon after wake_idle as the blocking wait would (the
  // eventfd is in the set; the claim is read first, without a system call).
  void spin_until(detail::worker& w, std::uint64_t due) noexcept {
    m_counters.timer_spins.add();
    // acquire: pairs with the waker's seq_cst exchange (parking.cpp's wake_claim).
    while (w.sleeping.load(std::memory_order_acquire) == 1) {
      fetch(0);
      if (m_count != 0 || ns_of(clock::now()) >= due) return;
    }
  }

  // Reads ready events into the buffer (timeout_ms: 0 or -1).
  void fetch(int timeout_ms) noexcept {
    m_next = m_count = 0;
    const int n = epoll_wait(m_epoll, m_buffer, k_max_events, timeout_ms);
    if (n <= 0) return;  // EINTR: the worker searches again
    m_count = static_cast<std::size_t>(n);
  }

  std::size_t dispatch(const epoll_event& ev) noexcept {
    if (ev.data.u64 == k_wake_tag) {
      std::uint64_t v;
      [[maybe_unused]] const ssize_t n = read(m_wake, &v, sizeof v);
      return 0;
    }
    if (ev.data.u64 == k_timer_tag) {
      std::uint64_t v;
      [[maybe_unused]] const ssize_t n = read(m_timer, &v, sizeof v);
      return 0;  // the due timers run in fire_timers
    }
    auto it = m_watches.find(ev.data.u64);
    if (it == m_watches.end()) {
      apply_commands();  // an install posted by another thread may be pending (see the design above)
      it = m_watches.find(ev.data.u64);
      if (it == m_watches.end()) return 0;  // unwatched since
    }
    const std::shared_ptr<entry> e = it->second;  // the handler may unwatch itself
    m_counters.events.add();
    run_guarded([&] { e->handler(ev.events); });
    return 1;
  }

  std::size_t fire_timers(std::size_t budget) noexcept {
    std::size_t ran = 0;
    const std::uint64_t now = ns_of(clock::now());
    while (ran < budget && !m_timers.empty() && m_timers.top().deadline_ns <= now) {
      pending_timer t = m_timers.top();
      m_timers.pop();
      if (m_cancelled.erase(t.id) != 0) {
        m_counters.timers_cancelled.add();
        continue;
      }
      run_guarded([&] { (*t.fn)(); });
      t.fn.reset();  // the callable's captures go before it is counted finished
      m_counters.timers_fired.add();
      ++ran;
    }
    // Cancelled timers not yet due are dropped now, so wait_idle need not wait for them.
    if (!m_cancelled.empty()) drop_cancelled();
    arm();
    return ran;
  }

  void drop_cancelled() {
    std::vector<pending_timer> keep;
    while (!m_timers.empty()) {
      pending_timer t = m_timers.top();
      m_timers.pop();
      if (m_cancelled.erase(t.id) != 0) {
        m_counters.timers_cancelled.add();
      } else {
        keep.push_back(std::move(t));
      }
    }
    for (auto& t : keep) m_timers.push(std::move(t));
    m_cancelled.clear();  // ids of timers that had run already
  }

  template <class F>
  void run_guarded(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      m_counters.handler_errors.add();
      detail::report_detached_exception(m_w, std::current_exception());
    }
  }

  // The timerfd to the earliest deadline (disarmed with none).
  void arm() noexcept {
    const std::uint64_t next = m_timers.empty() ? 0 : m_timers.top().deadline_ns;
    if (next == m_armed_ns) return;
    m_armed_ns = next;
    itimerspec spec{};
    if (next != 0) {
      spec.it_value.tv_sec = static_cast<time_t>(next / 1000000000u);
      spec.it_value.tv_nsec = static_cast<long>(next % 1000000000u);
      if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
    }
    timerfd_settime(m_timer, TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  void add_internal(int fd, std::uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close_all();
      fail("epoll_ctl");
    }
  }

  void close_all() noexcept {
    for (int* fd : {&m_epoll, &m_wake, &m_timer}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }

  detail::worker& m_w;
  std::atomic<std::uint64_t>& m_ids;
  std::atomic<std::uint64_t>& m_created;
  const std::uint64_t m_poll_ns;
  int m_epoll = -1, m_wake = -1, m_timer = -1;
  // Owner-private:
  std::unordered_map<std::uint64_t, std::shared_ptr<entry>> m_watches;
  std::priority_queue<pending_timer, std::vector<pending_timer>, std::greater<>> m_timers;
  std::unordered_set<std::uint64_t> m_cancelled;
  epoll_event m_buffer[k_max_events];
  std::size_t m_next = 0, m_count = 0;  // buffered events [m_next, m_count)
  std::uint64_t m_last_poll_ns = 0;
  std::uint64_t m_armed_ns = 0;
  loop_counters m_counters;
  // Shared with other threads:
  std::mutex m_command_mutex;
  std::vector<command> m_commands;
  std::atomic<bool> m_has_commands{false};
};

// The loops of one runtime, a subsystem: ids, the timers' created count,
// the counters in stats().
class io_system final : public detail::subsystem {
 public:
  static constexpr char key = 0;
  explicit io_system(detail::runtime_core& rt) {
    m_loops.resize(rt.workers.size());
    rt.add_source([this, &rt](detail::worker& w) {
      auto* l = new loop(rt, w, m_ids, m_created);
      m_loops[w.index] = l;
      return static_cast<detail::work_source*>(l);
    });
  }
  std::uint64_t created() const noexcept override { return m_created.load(std::memory_order_seq_cst); }
  std::uint64_t finished() const noexcept override {
    std::uint64_t n = 0;
    for (const loop* l : m_loops) n += l->finished();
    return n;
  }
  void add_stats(runtime_stats& s) const override {
    for (auto& ws : s.workers) m_loops[ws.worker]->add_stats(ws);
  }
  loop& at(unsigned w) noexcept { return *m_loops[w]; }

 private:
  std::vector<loop*> m_loops;  // owned by the runtime's sources
  std::atomic<std::uint64_t> m_ids{2};  // 0 and 1 tag the eventfd and the timerfd
  std::atomic<std::uint64_t> m_created{0};  // timers set (seq_cst: wait_idle reads it after finished())
};

}  // namespace

event_loop& loop_of(runtime& rt, worker_id w) {
  if (w.value >= rt.num_workers()) {
    throw usage_error("strata::io::loop_of: worker " + std::to_string(w.value) + " of a runtime of " +
                      std::to_string(rt.num_workers()) + " workers");
  }
  return detail::subsystem_of<io_system>(rt.core()).at(w.value);
}

event_loop& this_loop() {
  detail::worker* w = detail::current_worker();
  if (w == nullptr) throw usage_error("strata::io::this_loop() called outside the workers; use loop_of(rt, worker)");
  return detail::subsystem_of<io_system>(*w->rt).at(w->index);
}

}  // namespace strata::io
