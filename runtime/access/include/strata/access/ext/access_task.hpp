// The frame path of lock-mode tasks: what a submission builds and what the
// worker that runs it does, inline where the common case must be cheap.
//
// A submission with a short list and a small body is one task frame: the
// callable (access_task) carries the sorted lock list and the body, so
// nothing is allocated (a future's state aside). The worker that runs it
// takes its locks, all or none (a free lock is one CAS), runs the body and
// releases them (one RMW per lock and a look at `waiters`). Anything else
// (a refusal, a lost CAS, a waiter to serve, a list or body too large for
// a frame) becomes a heap access_request and goes to src/dispatch.cpp,
// which decides (resource.hpp tells the whole protocol).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include <strata/access/ext/lock_word.hpp>
#include <strata/access/handles.hpp>
#include <strata/numa_alloc/numa_allocator.hpp>
#include <strata/runtime/ext/core.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/future.hpp>

namespace strata::detail {

// Validates the list (non-empty, this runtime's resources, no duplicates)
// and writes it to out[0..n), sorted by resource id; throws usage_error
// (locks.cpp). `api` names the caller in the message.
void prepare_locks_any(runtime_core& rt, const access* list, std::size_t n, access_lock* out, const char* api);

// prepare_locks, with lists of one and two resources (a transfer, a copy)
// done inline: with a list from an initializer_list the compiler knows n,
// and the check is a compare per handle (a handle of this runtime is never
// empty; ids are unique within a runtime).
inline void prepare_locks(runtime_core& rt, const access* list, std::size_t n, access_lock* out, const char* api) {
  if (n == 2) {
    const resource& a = list[0].res;
    const resource& b = list[1].res;
    if (a.owner() == &rt && b.owner() == &rt && a.id() != b.id()) {
      const bool swap = b.id() < a.id();
      out[swap ? 1 : 0] = access_lock(a.state(), list[0].mode);
      out[swap ? 0 : 1] = access_lock(b.state(), list[1].mode);
      return;
    }
  } else if (n == 1 && list[0].res.owner() == &rt) {
    out[0] = access_lock(list[0].res.state(), list[0].mode);
    return;
  }
  prepare_locks_any(rt, list, n, out, api);  // longer lists, and every error
}

// What a lock-mode task does: run() once it holds its locks, done() after
// it released them (a waiter may submit conflicting work as soon as it
// sees the result), fail(e) instead of both when it could not be queued
// (out of memory). For submit_with_access the result goes to a future;
// for spawn_with_access an exception is counted and reported once, as a
// detached task's.
template <class R, class F>
struct access_body_future {
  static constexpr const char* api = "submit_with_access";
  F fn;  // first: a move that throws leaves `state` in place for fail()
  std::shared_ptr<future_state<R>> state;
  void run() noexcept { state->fill(fn); }
  void done() noexcept { state->finish(); }
  void fail(std::exception_ptr e) noexcept {
    state->error = std::move(e);
    state->finish();
  }
};

void report_detached_access_exception(std::exception_ptr e) noexcept;  // dispatch.cpp

template <class F>
struct access_body_detached {
  static constexpr const char* api = "spawn_with_access";
  F fn;
  void run() noexcept {
    try {
      fn();
    } catch (...) {
      report_detached_access_exception(std::current_exception());
    }
  }
  void done() noexcept {}
  void fail(std::exception_ptr e) noexcept { report_detached_access_exception(std::move(e)); }
};

// A lock-mode task that waits in the dispatcher's queues, or whose list or
// body is too large for a task frame: its locks, its place in the queues
// and (in the derived access_request_of) its body. Allocated on the
// submitter's or refusing worker's node; freed by complete() or drop().
struct access_request {
  static constexpr std::size_t k_inline_locks = 4;

  access_request() = default;
  access_request(const access_request&) = delete;
  access_request& operator=(const access_request&) = delete;

  access_lock inline_locks[k_inline_locks];
  std::unique_ptr<access_lock[]> more_locks;  // lists longer than k_inline_locks
  access_lock* locks = inline_locks;          // sorted by resource id
  std::uint32_t n_locks = 0;
  int prio = 0;
  std::uint64_t seq = 0;     // age: when it first went to the dispatcher
  std::uint16_t ticket = 0;  // writer registration in the lock words (0: not yet)
  bool held = false;         // its locks were taken for it by a dispatcher
  void (*invoke)(access_request*) noexcept = nullptr;    // body.run()
  void (*complete)(access_request*) noexcept = nullptr;  // body.done(), then frees the request
  void (*drop)(access_request*) noexcept = nullptr;      // frees it unrun (its submission failed)
};

template <class B>
struct access_request_of final : access_request {
  using allocator = numa_allocator<access_request_of>;
  access_request_of(B&& b, int priority) : body(std::move(b)) {
    prio = priority;
    invoke = [](access_request* r) noexcept { static_cast<access_request_of*>(r)->body.run(); };
    complete = [](access_request* r) noexcept {
      auto* me = static_cast<access_request_of*>(r);
      me->body.done();
      destroy(me);
    };
    drop = [](access_request* r) noexcept { destroy(static_cast<access_request_of*>(r)); };
  }
  // On the caller's node: the worker that runs it frees it into its own
  // cache, returned to this node in batches (a cross-thread free into
  // glibc's arena takes the arena's lock, which two workers fight over).
  static access_request_of* create(B&& b, int priority) {
    allocator a = allocator::local();
    access_request_of* p = a.allocate(1);
    try {
      return ::new (static_cast<void*>(p)) access_request_of(std::move(b), priority);
    } catch (...) {
      a.deallocate(p, 1);
      throw;
    }
  }
  static void destroy(access_request_of* p) noexcept {
    p->~access_request_of();
    allocator::local().deallocate(p, 1);
  }
  B body;
};

// The locks of a lock-mode task that travels in its task frame (the common
// case: a short list and a small body). Nothing is allocated for it; it
// becomes an access_request only when its locks refuse it.
struct access_head {
  static constexpr std::size_t k_locks = 4;
  access_lock locks[k_locks];
  std::uint32_t n = 0;
  int prio = 0;
};

// The frame path: its common case inline.

// acquire_frame_locks from lock `first` on, the general way (locks.cpp):
// locks [0, first) are held; all or none.
bool acquire_frame_locks_from(worker& w, access_head& head, std::size_t first, std::size_t* taken) noexcept;

// Takes every lock of head for worker w, all or none; on refusal *taken
// says how many it held for a moment (given back).
inline bool acquire_frame_locks(worker& w, access_head& head, std::size_t* taken) noexcept {
  for (std::size_t i = 0; i < head.n; ++i) {
    if (!try_lock_quick(*head.locks[i].res(), head.locks[i].mode(), w.index)) [[unlikely]] {
      return acquire_frame_locks_from(w, head, i, taken);
    }
  }
  return true;
}

// Counts a refused task's request (moved out of its frame) and queues it at
// the dispatcher (dispatch.cpp).
void block_frame(worker& w, access_request* req, std::size_t taken) noexcept;

// Someone waits for one of head's locks, just released: re-evaluates their
// queues and returns a request let through for the caller to run next, or
// nullptr (dispatch.cpp).
access_request* serve_after_release(worker& w, access_head& head) noexcept;

// Releases head's locks after the body ran; returns a task that the release
// let through for the caller to run next (in place), or nullptr.
inline access_request* release_frame_locks(worker& w, access_head& head) noexcept {
  using namespace lock_word;
  for (std::size_t i = head.n; i-- > 0;) {
    resource_state& r = *head.locks[i].res();
    // seq_cst RMW, then the seq_cst loads of `waiters` below: either we see
    // a blocked request's announcement or its locked retry sees this
    // release (pairs with announce in dispatch.cpp).
    if (head.locks[i].mode() == access_mode::read) {
      r.word.fetch_sub(k_reader, std::memory_order_seq_cst);
    } else {
      r.word.fetch_and(~k_write, std::memory_order_seq_cst);
    }
  }
  bool waited = false;
  for (std::size_t i = 0; i < head.n; ++i) {
    waited |= head.locks[i].res()->waiters.load(std::memory_order_seq_cst) != 0;  // seq_cst: see above
  }
  return waited ? serve_after_release(w, head) : nullptr;
}

// A refused task whose body could not move to a heap request (out of
// memory, or its move threw): it fails instead of waiting, and the queues
// of the locks it held for a moment get another look.
void abandon_refused_frame(worker& w, access_head& head, std::size_t taken) noexcept;
// Runs a request whose locks are held for it, and the chain of requests
// that each release lets through (at most a bounded number in place).
void run_access_chain(worker& w, access_request* req) noexcept;

// True while the dispatcher's queues are short enough to take a submission
// whose locks look busy (dispatch.cpp; access_system::admission).
bool queues_admit(const access_system& sys) noexcept;
// True when a task with these locks should go to the dispatcher's queues at
// submission (a lock looks held against it and the queues are short).
//
// Only a submission with a priority looks: a default-priority spawn goes
// straight to the submitter's deque (a worker's, or an outside thread's
// lane), and the worker that runs it queues it if it is refused then.
// The look reads the lock words, whose lines the workers running tasks on
// those resources keep writing: each read is a transfer from another core,
// and the next lock of that resource by the other core another; and under
// skew a transfer of a hot account would go to the queues under the
// dispatcher's mutex though it would most likely find the lock free by the
// time it ran. A priority is kept by the look: a task submitted while its
// resource is held waits in the queue ordered by priority.
inline bool queue_at_submission(runtime_core& rt, const access_lock* locks, std::size_t n, int prio) noexcept {
  (void)rt;
  if (prio == 0) return false;
  return looks_busy(locks, n) && queues_admit(*locks[0].res()->sys);
}

// The callable of a lock-mode task frame.
template <class B>
struct access_task {
  access_head head;
  B body;
  void operator()() noexcept {
    worker& w = *current_worker();
    std::size_t taken = 0;
    if (!acquire_frame_locks(w, head, &taken)) {
      access_request* req;
      try {
        req = access_request_of<B>::create(std::move(body), head.prio);
      } catch (...) {
        abandon_refused_frame(w, head, taken);
        body.fail(std::current_exception());
        return;
      }
      std::copy(head.locks, head.locks + head.n, req->locks);
      req->n_locks = head.n;
      block_frame(w, req, taken);
      return;
    }
    body.run();
    // Before done(): a waiter may submit conflicting work next.
    access_request* next = release_frame_locks(w, head);
    body.done();
    if (next != nullptr) run_access_chain(w, next);
  }
};

// True when a body of type B travels in a task frame.
template <class B>
inline constexpr bool k_access_in_frame = !k_boxed<access_task<B>>;

// Fills a heap request's locks from the list (prepare_locks); throws
// usage_error (locks.cpp).
void prepare_access(runtime_core& rt, access_request& req, const access* list, std::size_t n, const char* api);
// Starts a prepared heap request: a spawn when its locks look free, else
// the dispatcher's queues. Throws runtime_error after shutdown, with the
// request dropped (dispatch.cpp).
void start_access(runtime_core& rt, access_request* req);

}  // namespace strata::detail
