// Tasks that declare what they read and write (seed 004).
//
//   strata::resource a = rt.make_resource(), b = rt.make_resource();
//   rt.submit_with_access({strata::read(a), strata::write(b)}, fn);              // lock mode
//   rt.submit_with_access({strata::write(b)}, fn, strata::priority{10});
//
// Lock mode: each resource is one 32-bit atomic word,
//
//   bit 31: write lock | bits 24-30: readers (at most 127) |
//   bits 16-23: holder worker | bits 0-15: ticket of a waiting writer
//
// A task runs only after it holds every lock it asked for, taken all or
// none (each try fails without waiting and gives back what it took, so no
// access pattern can deadlock). Blocked tasks wait in priority queues
// (priority, then age), one per resource: the queue of the resource whose
// lock refused them, under one dispatcher mutex.
//
// The dispatcher is a role, not a thread. A submission whose locks look
// free is a plain spawn (no lock taken, no mutex): the worker that runs it
// tries its locks, all or none, and runs it. One refused then, or one
// whose locks look busy at submission, goes to the dispatcher's queues
// (under the mutex). The worker that releases locks re-evaluates the
// queues of the resources it released; a task refused by another resource
// moves to that resource's queue (seed 004's redistribution); a task that
// gets its locks goes on the releasing worker's deque, which just had the
// resources in its cache (thieves take it when that worker is busy).
// Why no dedicated dispatcher thread: on a node where every core runs a
// worker it would take a core or add a wake-up (microseconds) to every
// blocked task; with the role, an uncontended task costs a spawn and its
// CAS pair. Why locks are taken when the task runs, not at submission: a
// task that held its locks while it waited in a deque made every later
// task on those resources conflict (bank transfer, 2x10^6 transfers from
// one task on 2 workers: 1.56 s with locks at submission and a cap on such
// tasks, 0.30 s now). Why queues per resource rather than seed 004's per
// holder worker: with few workers a holder's queue holds about all blocked
// tasks, and re-scanning it on every release made a 10^5-task run
// quadratic (it did not finish in 120 s); a resource's queue is scanned
// until the first task that resource still refuses while write-locked (a
// few while read-locked).
//
// Fairness: a writer that is blocked by readers registers its ticket in the
// word; from then on new readers may overtake it at most
// config::reader_front_runs times, then they wait too. The counter resets
// when a writer gets the lock. The 128th concurrent reader waits rather
// than overflow the 7-bit count.
#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/runtime_core.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/future.hpp>

namespace strata {

namespace detail {
struct resource_state;
struct access_request;
}  // namespace detail

// A handle to one resource of one runtime (copyable).
class resource {
 public:
  resource() = default;
  std::uint32_t id() const noexcept;
  bool valid() const noexcept { return m_state != nullptr; }
  friend bool operator==(const resource& a, const resource& b) noexcept { return a.m_state == b.m_state; }

  // Internal.
  explicit resource(detail::resource_state* s) noexcept : m_state(s) {}
  detail::resource_state* state() const noexcept { return m_state; }

 private:
  detail::resource_state* m_state = nullptr;
};

enum class access_mode : std::uint8_t { read, write };

struct access {
  resource res;
  access_mode mode = access_mode::read;
};

inline access read(resource r) noexcept { return {r, access_mode::read}; }
inline access write(resource r) noexcept { return {r, access_mode::write}; }

struct priority {
  int value = 0;  // higher runs first among blocked tasks
};

namespace detail {

// One resource: its lock word and the reader front-run count.
struct resource_state {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> front_runs{0};  // readers that overtook a registered writer
  // Blocked requests that ask for this resource: RMW (seq_cst) under the
  // dispatcher's mutex, read (seq_cst) by releasers after their release.
  std::atomic<std::uint32_t> waiters{0};
  std::uint32_t id = 0;
  const runtime_core* owner = nullptr;
};

// One lock-mode task: its locks, its place in the queues, and (in the
// derived access_request_of) the callable and the future's state. Created
// by submit_with_access; alive until the task ran and released its locks
// (`self` keeps it alive even when the caller dropped the future).
struct access_request {
  struct lock {
    resource_state* res;
    access_mode mode;
  };
  static constexpr std::size_t k_inline_locks = 4;

  access_request() = default;
  access_request(const access_request&) = delete;
  access_request& operator=(const access_request&) = delete;

  lock inline_locks[k_inline_locks];
  std::unique_ptr<lock[]> more_locks;  // lists longer than k_inline_locks
  lock* locks = inline_locks;          // sorted by resource id
  std::uint32_t n_locks = 0;
  int prio = 0;
  std::uint64_t seq = 0;     // age: when it first went to the dispatcher
  std::uint16_t ticket = 0;  // writer registration in the lock words (0: not yet)
  bool held = false;         // its locks were taken for it by a dispatcher
  void (*invoke)(access_request*) noexcept = nullptr;    // runs fn into the future's state
  void (*complete)(access_request*) noexcept = nullptr;  // makes the future ready
  std::shared_ptr<access_request> self;                  // reset when the task is done
};

template <class R, class F>
struct access_request_of final : access_request {
  access_request_of(runtime_core* rt, F&& f, int priority) : state(rt), fn(std::move(f)) {
    prio = priority;
    invoke = [](access_request* r) noexcept {
      auto* me = static_cast<access_request_of*>(r);
      me->state.fill(me->fn);
    };
    complete = [](access_request* r) noexcept {
      auto* me = static_cast<access_request_of*>(r);
      // Last: the future may be the only other owner; reset() may free us.
      std::shared_ptr<access_request> keep = std::move(me->self);
      me->state.finish();
    };
  }
  future_state<R> state;
  F fn;
};

// Validates the list (non-empty, this runtime's resources, no duplicates)
// and fills req's sorted locks; throws usage_error (resource.cpp).
void prepare_access(runtime_core& rt, access_request& req, const access* list, std::size_t n);
// Starts a prepared request whose `self` is set: a spawn when its locks
// look free, else the dispatcher's queues. Throws runtime_error after
// shutdown, with the request released (resource.cpp).
void start_access(runtime_core& rt, access_request* req);

}  // namespace detail

}  // namespace strata
