// Spinning, parking and waking: how an idle worker waits without losing a
// wake-up and without burning a core.
//
// The problem. A worker that finds no work should stop using its core, but
// a producer that makes work available a moment later must be able to get
// it back, and a burst of producers must not wake every sleeper (a
// thundering herd) or pay a system call each.
//
// The protocol follows Go's scheduler (runtime/proc.go, "Worker thread
// parking/unparking"), per package (socket):
// - Each package has an idle word: its spinning workers (low 32 bits) and
//   its parked workers (high 32 bits); each worker has a `sleeping` word.
// - A producer of shared work (a deque publish, an injector push, an inbox
//   push, work for a source) publishes it, runs a seq_cst fence, then reads
//   the idle words: it wakes a parked worker only if nobody spins in its
//   package (a spinner will find the work), or in another package that has
//   sleepers and no spinner. A push into one worker's inbox reads that
//   worker's `sleeping` word instead.
// - An idle worker first spins on its own sources only (inbox, deque, work
//   sources: a reply across workers usually comes within microseconds),
//   then, if fewer than about half the busy workers of its package spin (or
//   nobody spins and somebody works), it becomes a spinner and searches
//   everything, victims included. A spinner that finds work and was the
//   last spinner wakes one more (the search goes on); a spinner that gives
//   up leaves the spinning state and re-checks every source once more.
// - Parking is two-phase: announce (sleepers + 1, then sleeping = 1, both
//   seq_cst), re-check inbox, deque, work sources, injectors and victims,
//   then sleep (on the futex, or in the idle wait a work source supplies)
//   or cancel. Whoever flips `sleeping` from 1 to 0 (the worker itself
//   cancelling, or a waker) takes it out of the sleeper count, so a worker
//   is never counted twice and a wake is never spent on a worker awake.
//
// No lost wake-ups: the producer's publish and the parker's announce are
// both followed by a read of the other side's word (seq_cst fence /
// seq_cst RMWs, then loads). In the single total order of seq_cst
// operations one of the two comes first, so either the parker's re-check
// sees the work or the producer sees the parker and wakes it.
//
// Rejected: a condition variable per worker (a mutex on every wake and
// every park), a global sleeper stack (one contended line for all
// producers), and waking on every publish (a futex call per shared task).
#include "parking.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include <strata/runtime/ext/assert.hpp>

#include "find_work.hpp"

namespace strata::detail {
namespace {

constexpr int k_spin_rounds = 2000;  // steal sweeps before parking

// Before the spin cap: up to k_local_spin_max rounds (a few microseconds)
// on the worker's own sources only, touching no other worker's lines. An
// actor conversation across workers gets its reply within that time;
// without it the worker that just sent would park at once whenever the
// other one was spinning, and every message would pay a futex wake.
//
// The length adapts, as an adaptive mutex's spin does, but only to work
// that comes from outside the workers. A worker whose idle wait is a work
// source's (an event loop) and whose work comes from the kernel far apart
// (requests a millisecond apart, their timers) would burn the whole spin on
// every idle phase, and on a machine it shares with other processes (the
// load generator, the clients) take the core from them. So
// (adapt_local_spin):
// - a local spin that finds work doubles the limit, up to the maximum;
// - a park that a waker ended (a worker or a submitting thread claimed it:
//   work of the runtime's own), or that was cancelled, restores the
//   maximum. Such work is what the spin is for, and how soon it came is not
//   known here (the futex wake-up's latency is in the park);
// - a park that the idle wait ended on its own (a message arrived, a
//   descriptor or a timer became ready) doubles the limit if it lasted less
//   than k_short_park_factor full-length spins (estimated from this spin;
//   the factor leaves room for the wake-up's latency), and halves it
//   otherwise, down to k_local_spin_min. Doubling, not the maximum: events
//   that come at random times are sometimes close together, and one close
//   pair should not buy the next several idle phases a full spin.
//   A source whose ready() cannot see those events (an event loop: only
//   epoll_wait knows its descriptors; it waits for a timer due soon by
//   polling, itself) always halves: a longer spin would not have caught
//   them. Doubling there cost an HTTP server at 20000 req/s a third of a
//   core more for no latency.
// So the runtime's own conversations keep the full spin, and an event loop
// serving requests a millisecond apart idles on about k_local_spin_min rounds.
constexpr std::uint64_t k_short_park_factor = 2;

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Wakes w from its sleep: its futex, and the idle wait of its work source
// if it has one (a source may have been registered while w slept on the
// futex, so both).
void wake_sleeper(worker& w) noexcept {
  // seq_cst: with add_source's store and the parker's load, so a waker that
  // misses the source claimed the worker before the parker read it, and the
  // parker then sees sleeping == 0 and does not sleep in the source's wait.
  if (work_source* s = w.idle_waiter.load(std::memory_order_seq_cst)) s->wake_idle();
  futex_wake(w.sleeping, 1);
}

// Takes `target` out of the sleeper count and wakes it, if it was parked
// (or announced); false when it was awake.
bool wake_claim(worker& target) noexcept {
  // seq_cst exchange: the one who flips 1 -> 0 owns the wake (pairs with the
  // parker's seq_cst store of 1 and its own cancel exchange). No relaxed
  // pre-check: on weak hardware it could read a stale 0 and miss a parker
  // that announced itself (store-buffering with stopping/idle).
  if (target.sleeping.exchange(0, std::memory_order_seq_cst) != 1) return false;
  const std::uint64_t prev = target.idle->word.fetch_sub(k_sleeper, std::memory_order_seq_cst);  // seq_cst: idle protocol
  STRATA_ASSERT(sleepers_of(prev) != 0, "a claimed sleeper was counted in its package's idle word");
  if (target.rt->trace != nullptr) [[unlikely]] {
    if (trace_ring* r = trace_here(*target.rt)) r->instant(trace_kind::wake, target.index);
  }
  wake_sleeper(target);
  return true;
}

// Leaves the spinning state; wakes one more if we were the last spinner and
// somebody sleeps (the last spinner to find work keeps the search going).
void stop_spinning_found_work(worker& w) noexcept {
  // seq_cst: part of the idle protocol (pairs with producers' fence + load).
  const std::uint64_t prev = w.idle->word.fetch_sub(k_spinner, std::memory_order_seq_cst);
  STRATA_ASSERT(spinners_of(prev) != 0, "a spinner was counted in its package's idle word");
  // Not under pinned_mpsc: nobody else could take what this one found.
  if (spinners_of(prev) == 1 && sleepers_of(prev) != 0 && w.rt->shares) wake_one(*w.rt, w.index);
}

// Takes w out of the sleepers unless a waker did; true when it did so itself.
bool cancel_park(worker& w) noexcept {
  if (w.sleeping.exchange(0, std::memory_order_seq_cst) != 1) return false;  // seq_cst: see wake_claim
  // seq_cst: part of the idle protocol (as in wake_claim).
  const std::uint64_t prev = w.idle->word.fetch_sub(k_sleeper, std::memory_order_seq_cst);
  STRATA_ASSERT(sleepers_of(prev) != 0, "a parker was counted in its package's idle word");
  return true;
}

// What the local spin and the parking re-check look for besides tasks: a
// ready work source, or routed frames left in the inbox.
bool other_work(worker& w) noexcept { return w.inbox_backlog || (sources_of(w) != 0 && sources_ready(w)); }

// The first phase: own sources only. A task, or nullptr (then
// *source_ready says whether a source or the inbox backlog is why).
task* local_spin(worker& w, bool* source_ready) noexcept {
  for (std::uint32_t round = 0; round < w.local_spin_rounds; ++round) {
    if (task* t = find_local(w)) return t;
    if (other_work(w)) {
      *source_ready = true;
      return nullptr;
    }
    cpu_relax();
    cpu_relax();
  }
  return nullptr;
}

// Sleeps until a waker flips `sleeping` (or the runtime stops); a work
// source that supplies the idle wait sleeps in it instead (it returns on
// its own events too: then the worker searches again).
void sleep(worker& w) noexcept {
  runtime_core& rt = *w.rt;
  if (work_source* s = w.idle_waiter.load(std::memory_order_seq_cst)) {  // seq_cst: see wake_sleeper
    // seq_cst: after the load above (a waker's claim before it is seen here).
    if (w.sleeping.load(std::memory_order_seq_cst) == 1 && !rt.stopping.load(std::memory_order_acquire)) {
      s->idle_wait(w);
    }
    return;
  }
  // acquire loads: pair with the waker's seq_cst exchange and shutdown's store.
  while (w.sleeping.load(std::memory_order_acquire) == 1 && !rt.stopping.load(std::memory_order_acquire)) {
    futex_wait(w.sleeping, 1, 0);
  }
}

void set_local_spin(worker& w, std::uint32_t rounds) noexcept {
  if (rounds == w.local_spin_rounds) return;
  w.local_spin_rounds = rounds;
  w.counters.local_spin_limit.set(rounds);
}

// After a local spin that found nothing and took spin_ns: the idle wait
// ended on its own waited_ns after it (see the rule above).
void adapt_local_spin(worker& w, std::uint64_t spin_ns, std::uint64_t waited_ns) noexcept {
  const std::uint64_t full_ns = spin_ns * k_local_spin_max / w.local_spin_rounds;
  // relaxed: set once, and read by this thread in sleep() just before.
  const work_source* s = w.idle_waiter.load(std::memory_order_relaxed);
  const bool spin_could_see = s == nullptr || s->ready_sees_idle_events();
  if (spin_could_see && waited_ns < k_short_park_factor * full_ns) {
    set_local_spin(w, std::min(k_local_spin_max, 2 * w.local_spin_rounds));
  } else if (w.local_spin_rounds > k_local_spin_min) {
    set_local_spin(w, w.local_spin_rounds / 2);
  }
}

}  // namespace

task* idle_phase(worker& w) {
  runtime_core& rt = *w.rt;
  w.pool.flush_outgoing();  // frames of other workers go home before we wait (frame_pool.hpp)
  const std::uint64_t start = now_ns();
  bool source_ready = false;
  task* found = local_spin(w, &source_ready);
  if (found != nullptr || source_ready) {
    set_local_spin(w, std::min(k_local_spin_max, 2 * w.local_spin_rounds));
    w.counters.idle_ns.add(now_ns() - start);
    return found;
  }
  const std::uint64_t spin_end = now_ns();
  // Spin cap, per package: at most about half its busy workers spin, and
  // one spins as long as anybody anywhere is busy (relaxed loads: a heuristic).
  const std::uint64_t s = w.idle->word.load(std::memory_order_relaxed);  // relaxed: a heuristic
  const std::uint64_t in_pkg = w.idle->workers;
  const std::uint64_t idle_pkg = spinners_of(s) + sleepers_of(s) + 1;
  const std::uint64_t busy_pkg = in_pkg > idle_pkg ? in_pkg - idle_pkg : 0;
  std::uint64_t idle_all = 1;
  for (std::size_t p = 0; p < rt.num_packages; ++p) {
    const std::uint64_t x = rt.idle[p].word.load(std::memory_order_relaxed);  // relaxed: a heuristic
    idle_all += spinners_of(x) + sleepers_of(x);
  }
  const bool anyone_busy = rt.workers.size() > idle_all;
  // Only tiered stealing searches. Under pinned_mpsc a search finds nothing
  // the local spin would not (no victims, no shared queue). Under hybrid it
  // could find only spilled work, which is overflow (rare by design) and
  // whose producer wakes a sleeper (spill_task, maybe_wake: with nobody
  // spinning it always does); spinning for it cost an I/O server more than
  // a core (policy.cpp). Both park after their local spin.
  if (rt.steals && (2 * spinners_of(s) < busy_pkg || (spinners_of(s) == 0 && anyone_busy))) {
    w.idle->word.fetch_add(k_spinner, std::memory_order_seq_cst);  // seq_cst: part of the idle protocol
    bool spinning = true;
    for (int round = 0; round < k_spin_rounds; ++round) {
      found = find_task(w, round % k_far_period == k_far_period - 1);
      if (found != nullptr || other_work(w)) {
        stop_spinning_found_work(w);
        spinning = false;
        break;
      }
      if (rt.stopping.load(std::memory_order_relaxed)) break;  // relaxed: re-checked below
      for (int i = 0; i < 16; ++i) cpu_relax();
      if ((round & 63) == 63) sched_yield();
    }
    if (spinning) {
      w.idle->word.fetch_sub(k_spinner, std::memory_order_seq_cst);  // seq_cst: then re-check (Go's dance)
      found = find_task(w, true);
      if (found == nullptr && other_work(w)) spinning = false;
    }
    if (found != nullptr || !spinning) {
      w.counters.idle_ns.add(now_ns() - start);
      return found;
    }
  }
  if (!rt.stopping.load(std::memory_order_acquire)) {  // acquire: pairs with shutdown's store (re-read below)
    // Two-phase park: announce, re-check everything, sleep or cancel. The
    // sleeper count goes up before `sleeping` does, so a waker that claims
    // us (flips sleeping 1 -> 0) always finds us counted. seq_cst, both: the
    // announce of the protocol above (pairs with producers' fence + loads).
    w.idle->word.fetch_add(k_sleeper, std::memory_order_seq_cst);
    w.sleeping.store(1, std::memory_order_seq_cst);
    found = find_task(w, true);
    if (found != nullptr || other_work(w) || rt.stopping.load(std::memory_order_seq_cst)) {
      cancel_park(w);
      set_local_spin(w, k_local_spin_max);
    } else {
      w.counters.parks.add();
      const std::uint64_t slept_at = w.trace != nullptr ? trace_now() : 0;
      sleep(w);
      if (w.trace != nullptr) w.trace->span(trace_kind::park, slept_at);
      // Woken by our own idle wait or stopping: take ourselves out if no waker did.
      const bool claimed = !cancel_park(w);
      w.counters.wakeups.add();
      const std::uint64_t end = now_ns();
      if (claimed) {
        set_local_spin(w, k_local_spin_max);
      } else {
        adapt_local_spin(w, spin_end - start, end - spin_end);
      }
      w.counters.idle_ns.add(end - start);
      return found;
    }
  }
  w.counters.idle_ns.add(now_ns() - start);
  return found;
}

void wake_one(runtime_core& rt, unsigned near) noexcept {
  // Nearest sleepers first: the woken worker steals from `near` cheaply.
  for (const auto& tier : rt.plan.tiers_of(near)) {
    for (unsigned v : tier.workers) {
      if (wake_claim(*rt.workers[v])) return;
    }
  }
  wake_claim(*rt.workers[near]);
}

void wake_all(runtime_core& rt) noexcept {
  for (auto& w : rt.workers) {
    wake_claim(*w);
    // Also a worker between its stopping check and its sleep: it re-reads stopping.
    wake_sleeper(*w);
  }
}

void maybe_wake(runtime_core& rt, unsigned near) noexcept {
  // seq_cst fence: orders the caller's publication before the reads of the
  // idle words (pairs with the parker's seq_cst announce, then its re-check).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const worker& w = *rt.workers[near];
  const std::uint64_t s = w.idle->word.load(std::memory_order_relaxed);  // relaxed: ordered by the fence
  if (spinners_of(s) != 0) return;  // a searcher of this package will find it
  if (sleepers_of(s) != 0) {
    wake_one(rt, near);  // nearest sleeper first: this package
    return;
  }
  // This package is all busy: another package with sleepers and no searcher.
  for (std::size_t p = 0; p < rt.num_packages; ++p) {
    if (p == w.package) continue;
    const std::uint64_t x = rt.idle[p].word.load(std::memory_order_relaxed);  // relaxed: ordered by the fence
    if (spinners_of(x) == 0 && sleepers_of(x) != 0) {
      wake_one(rt, near);  // scans near's tiers: the nearest sleeper wherever it is
      return;
    }
  }
}

void publish_and_wake(worker& w) noexcept {
  if (!w.rt->steals) return;  // pinned_mpsc, hybrid: nobody steals, the deque stays private (policy.cpp)
  if (w.deque.publish() > 0) {
    w.counters.publishes.add();
    maybe_wake(*w.rt, w.index);
  }
}

void notify_worker(worker& w) noexcept {
  // seq_cst fence: orders the caller's publication (an inbox push, a work
  // source's queue) before the read of `sleeping` (pairs with the parker's
  // seq_cst store of sleeping, then its re-check).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (w.sleeping.load(std::memory_order_relaxed) == 1) wake_claim(w);  // relaxed: ordered by the fence
}

}  // namespace strata::detail
