// Tasks that declare what they read and write (seed 004).
//
//   strata::resource a = rt.make_resource(), b = rt.make_resource();
//   rt.submit_with_access({strata::read(a), strata::write(b)}, fn);              // lock mode
//   rt.submit_with_access({strata::write(b)}, fn, strata::priority{10});
//   rt.spawn_with_access({strata::write(a), strata::write(b)}, fn);           // detached
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
// The dispatcher is a role, not a thread. A submission is a plain spawn (no
// lock taken, no mutex): its task frame carries the sorted lock list (up to
// 4) and the body, so nothing is allocated (the future's state aside); the
// worker that runs it tries its locks, all or none, and runs it. One
// refused then moves its body out of the frame into a heap request
// (access_request) and goes to the dispatcher's queues (under the mutex),
// as does one whose list or body does not fit a frame, and one with a
// priority or from outside the workers whose locks look busy at submission
// (queue_at_submission says why only those look). Bank transfer, 2x10^6 from one
// task: 346 -> 134 ms at 1 worker, 311 -> 144 ms at 2 (2-vCPU VM) once
// the request and the future no longer came from the heap per transfer.
// The worker that releases locks re-evaluates the queues of the resources
// it released; a task refused by another resource
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
// tasks, 0.30 s with them taken at run time, before the frame path). Why queues per resource rather than seed 004's per
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

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata/numa_alloc/numa_allocator.hpp>
#include <strata/runtime/error.hpp>
#include <strata/runtime/ext/runtime_core.hpp>
#include <strata/runtime/ext/task.hpp>
#include <strata/runtime/future.hpp>

namespace strata {

namespace detail {
struct resource_state;
struct access_request;
}  // namespace detail

// A handle to one resource of one runtime (copyable). It carries the
// resource's id and runtime, so that a submission validates and orders its
// list without reading the resource's lock word's cache line, which the
// workers running its tasks keep writing.
class resource {
 public:
  resource() = default;
  std::uint32_t id() const noexcept { return m_id; }
  bool valid() const noexcept { return m_state != nullptr; }
  friend bool operator==(const resource& a, const resource& b) noexcept { return a.m_state == b.m_state; }

  // Internal.
  resource(detail::resource_state* s, std::uint32_t id, const detail::runtime_core* owner) noexcept
      : m_state(s), m_owner(owner), m_id(id) {}
  detail::resource_state* state() const noexcept { return m_state; }
  const detail::runtime_core* owner() const noexcept { return m_owner; }

 private:
  detail::resource_state* m_state = nullptr;
  const detail::runtime_core* m_owner = nullptr;
  std::uint32_t m_id = 0;
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

// One resource: its lock word and the reader front-run count, on a cache
// line of its own (tasks on neighbouring resources run on other workers).
struct alignas(64) resource_state {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> front_runs{0};  // readers that overtook a registered writer
  // Blocked requests that ask for this resource: RMW (seq_cst) under the
  // dispatcher's mutex, read (seq_cst) by releasers after their release.
  std::atomic<std::uint32_t> waiters{0};
  std::uint32_t id = 0;
  const runtime_core* owner = nullptr;
};

static_assert(alignof(resource_state) >= 2, "access_lock keeps the mode in bit 0 of the pointer");

// One requested lock: the resource and the mode in one word (write: bit 0).
struct access_lock {
  std::uintptr_t bits = 0;
  access_lock() = default;
  access_lock(resource_state* r, access_mode m) noexcept
      : bits(reinterpret_cast<std::uintptr_t>(r) | (m == access_mode::write ? 1u : 0u)) {}
  resource_state* res() const noexcept { return reinterpret_cast<resource_state*>(bits & ~std::uintptr_t{1}); }
  access_mode mode() const noexcept { return (bits & 1u) != 0 ? access_mode::write : access_mode::read; }
};

// Validates the list (non-empty, this runtime's resources, no duplicates)
// and writes it to out[0..n), sorted by resource id; throws usage_error
// (resource.cpp). `api` names the caller in the message.
void prepare_locks_any(runtime_core& rt, const access* list, std::size_t n, access_lock* out, const char* api);

// prepare_locks, with lists of one and two resources (a transfer, a copy)
// done inline: with a list from an initializer_list the compiler knows n,
// and the check is a compare per handle (a handle of this runtime is never
// empty; ids are unique within a runtime). The general loop took about 88
// instructions per bank transfer (callgrind); with this and the inline
// queue_at_submission the submitter's whole loop, spawn included, went
// from about 240 to 159 per transfer.
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

void report_detached_access_exception(std::exception_ptr e) noexcept;  // resource.cpp

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
  // cache, returned to this node in batches (glibc's arena lock made that
  // cross-thread free a futex storm: bank transfer at 2 workers, 5x slower
  // than at 1).
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

// The lock word's fields (the layout at the top of this file).
namespace lock_word {
inline constexpr std::uint32_t k_write = 1u << 31;
inline constexpr std::uint32_t k_reader = 1u << 24;
inline constexpr std::uint32_t k_readers_mask = 0x7fu << 24;
inline constexpr std::uint32_t k_max_readers = 127;
inline constexpr std::uint32_t k_holder_shift = 16;
inline constexpr std::uint32_t k_holder_mask = 0xffu << 16;
inline constexpr std::uint32_t k_ticket_mask = 0xffffu;

inline std::uint32_t readers_of(std::uint32_t w) noexcept { return (w & k_readers_mask) >> 24; }
inline unsigned holder_of(std::uint32_t w) noexcept { return (w & k_holder_mask) >> k_holder_shift; }
inline std::uint32_t with_holder(std::uint32_t w, unsigned h) noexcept {
  return (w & ~k_holder_mask) | ((static_cast<std::uint32_t>(h) & 0xffu) << k_holder_shift);
}
}  // namespace lock_word

// The frame path. Its common case is inline (a bank transfer spent about
// 160 instructions in out-of-line lock calls, callgrind): a lock that is
// plainly free is taken with one CAS, a release nobody waits for is one
// RMW per lock and a look at `waiters`. Anything else (a refusal, a lost
// CAS, a waiter to serve) goes to resource.cpp, which decides.

// One lock for a frame task (which never registers as a waiting writer):
// false when the word refuses it or changed under us. seq_cst CAS: pairs
// with every other CAS and RMW on lock words and with the dispatcher's
// seq_cst `waiters` announcements (resource.cpp, announce).
inline bool try_lock_quick(resource_state& r, access_mode mode, unsigned holder) noexcept {
  using namespace lock_word;
  std::uint32_t w = r.word.load(std::memory_order_relaxed);  // relaxed: only the CAS's expected value
  if (mode == access_mode::write) {
    if ((w & (k_write | k_readers_mask)) != 0) return false;
    if (!r.word.compare_exchange_strong(w, with_holder(w | k_write, holder), std::memory_order_seq_cst,
                                        std::memory_order_relaxed)) {
      return false;
    }
    r.front_runs.store(0, std::memory_order_relaxed);  // relaxed: read under the same word's protocol
    return true;
  }
  if ((w & (k_write | k_ticket_mask)) != 0 || readers_of(w) == k_max_readers) return false;
  const std::uint32_t next = readers_of(w) == 0 ? with_holder(w + k_reader, holder) : w + k_reader;
  return r.word.compare_exchange_strong(w, next, std::memory_order_seq_cst, std::memory_order_relaxed);
}

// acquire_frame_locks from lock `first` on, the general way (resource.cpp):
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
// the dispatcher (resource.cpp).
void block_frame(worker& w, access_request* req, std::size_t taken) noexcept;

// Someone waits for one of head's locks, just released: re-evaluates their
// queues and returns a request let through for the caller to run next, or
// nullptr (resource.cpp).
access_request* serve_after_release(worker& w, access_head& head) noexcept;

// Releases head's locks after the body ran; returns a task that the release
// let through for the caller to run next (in place), or nullptr.
inline access_request* release_frame_locks(worker& w, access_head& head) noexcept {
  using namespace lock_word;
  for (std::size_t i = head.n; i-- > 0;) {
    resource_state& r = *head.locks[i].res();
    // seq_cst RMW, then the seq_cst loads of `waiters` below: either we see
    // a blocked request's announcement or its locked retry sees this
    // release (pairs with announce in resource.cpp).
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

// Heuristic, no lock taken: true when some lock is held in a way that
// refuses it (or a writer waits ahead of a reader).
inline bool looks_busy(const access_lock* locks, std::size_t n) noexcept {
  using namespace lock_word;
  for (std::size_t i = 0; i < n; ++i) {
    // relaxed: a hint; the all-or-none try decides.
    const std::uint32_t w = locks[i].res()->word.load(std::memory_order_relaxed);
    if ((w & k_write) != 0 || (w & k_ticket_mask) != 0) return true;
    if (locks[i].mode() == access_mode::write && readers_of(w) != 0) return true;
  }
  return false;
}
// True while the dispatcher's queues are short enough to take a submission
// whose locks look busy (resource.cpp; access_dispatcher::admission).
bool queues_admit(runtime_core& rt) noexcept;
// True when a task with these locks should go to the dispatcher's queues at
// submission (a lock looks held against it and the queues are short).
//
// Only a submission with a priority, or from outside this runtime's
// workers, looks: a default-priority spawn from a worker goes straight to
// its deque, and the worker that runs it queues it if it is refused then.
// The look reads the lock words, whose lines the workers running tasks on
// those resources keep writing: each read is a transfer from another core,
// and the next lock of that resource by the other core another. Bank
// transfer, 2x10^6 spawned from one task, 2 workers, the same process
// alternating rounds (2-vCPU VM): uniform 84-191 ms without the look
// against 101-238 ms with it; Zipf(0.99) 104-199 against 236-797 ms (with
// the look, a transfer of a hot account went to the queues under the
// dispatcher's mutex, and most of them would have found the lock free by
// the time they ran). A priority is kept by the look: a task submitted
// while its resource is held waits in the queue ordered by priority
// (LockMode.BlockedTasksStartInPriorityOrder).
inline bool queue_at_submission(runtime_core& rt, const access_lock* locks, std::size_t n, int prio) noexcept {
  if (prio == 0) {
    const worker* w = current_worker();
    if (w != nullptr && w->rt == &rt) return false;
  }
  return looks_busy(locks, n) && queues_admit(rt);
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
// usage_error (resource.cpp).
void prepare_access(runtime_core& rt, access_request& req, const access* list, std::size_t n, const char* api);
// Starts a prepared heap request: a spawn when its locks look free, else
// the dispatcher's queues. Throws runtime_error after shutdown, with the
// request dropped (resource.cpp).
void start_access(runtime_core& rt, access_request* req);

}  // namespace detail

}  // namespace strata
