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
// The dispatcher is a role, not a thread: the submitter tries the locks
// itself (no mutex when they are free), and the worker that releases
// locks re-evaluates the queues of the resources it released. A task
// refused by another resource moves to that resource's queue (seed 004's
// redistribution); a task that gets its locks runs on the releasing
// worker, which just had the resources in its cache. Why no dedicated
// dispatcher thread: on a node where every core runs a worker it would
// take a core or add a wake-up (microseconds) to every blocked task; with
// the role, an uncontended task costs its CAS pair and an inbox push
// (bench: bank transfer). Why queues per resource rather than seed 004's
// per holder worker: with few workers a holder's queue holds about all
// blocked tasks, and re-scanning it on every release made a 10^5-task run
// quadratic (it did not finish in 120 s); a resource's queue is scanned
// only until the first task that resource still refuses.
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
  std::uint32_t id = 0;
  const runtime_core* owner = nullptr;
};

// A task waiting for (or holding) its locks. Created by submit_with_access;
// freed after the task ran and released its locks.
struct access_request {
  struct lock {
    resource_state* res;
    access_mode mode;
  };
  std::vector<lock> locks;  // sorted by resource id
  task* frame = nullptr;    // the task to run once the locks are held
  int prio = 0;
  std::uint64_t seq = 0;       // age: submission order
  std::uint16_t ticket = 0;    // writer registration in the lock words
  unsigned holder = 0;         // worker that runs it (and releases its locks)
};

// Validates the list (non-empty, this runtime's resources, no duplicates),
// then acquires or queues the request and dispatches it (resource.cpp).
void submit_access(runtime_core& rt, std::unique_ptr<access_request> req, const access* list, std::size_t n);
// Called by the task after fn: releases the locks, re-evaluates the queues
// of the resources it released and the deferred requests, frees the
// request (resource.cpp).
void release_access(access_request* req) noexcept;

template <class R, class F>
struct access_task {
  std::shared_ptr<future_state<R>> state;
  access_request* req;
  F fn;
  void operator()() {
    state->fill(fn);
    release_access(req);  // before the future is ready: a waiter may submit conflicting work next
    state->finish();
  }
};

}  // namespace detail

}  // namespace strata
