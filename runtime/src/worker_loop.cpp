// The worker loop: finding work, stealing by tiers, spinning and parking.
//
// Finding work, in order: own inbox (tasks for this worker alone; messages
// for its actors go into their mailboxes on the way), own deque (LIFO), the
// next due actor turn, own NUMA node's injector, steal tier by tier, other
// nodes' injectors. Every k_injector_period-th task run also polls the inbox and
// the injector, so a worker deep in a fork-join computation still serves
// them (run_task -> poll_sources); parallel_invoke's inline joins have a
// schedule of their own (worker::join_poll_at): a poll comes at least every
// k_injector_period tasks run, or k_injector_period inline joins.
//
// Stealing: tiers come from the placement plan (nearest first). Within a
// tier the first victim is random, then round robin. Within the NUMA node
// (core, l3, numa tiers) a thief takes one task; beyond it (package, remote)
// it takes half of the victim's shared part, up to 32, one CAS each, keeps
// the rest on its own deque, so a remote transfer is paid once per batch.
// `lost` moves on to the next victim; `empty` also asks the victim to share
// (deque request flag).
//
// Spinning and parking follow Go's scheduler (runtime/proc.go, "Worker
// thread parking/unparking"): a producer of shared work wakes a parked
// worker only if no worker spins; at most about half the busy workers spin;
// a spinner that finds work and was the last spinner wakes one more; a
// spinner that gives up re-checks every source after leaving the spinning
// state. Parking is two-phase: announce (sleeping = 1, sleepers + 1, both
// seq_cst), re-check inbox, deque, injectors and victims, then sleep on the
// futex or cancel. Whoever flips `sleeping` from 1 to 0 (the worker itself
// cancelling, or a waker) removes it from the sleeper count, so a worker is
// never counted twice and a wake is never spent on a worker already awake.
//
// No lost wake-ups: producers publish (deque split release store, injector
// push, inbox exchange), run a seq_cst fence, then read `idle` / `sleeping`;
// the parker writes `sleeping`/`idle` seq_cst, then re-checks the sources.
// In the single total order one of the two sees the other.
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include <strata/runtime/ext/runtime_core.hpp>
#include <strata/runtime/task_group.hpp>

#include "actor_table.hpp"
#include "injector.hpp"
#include "worker_loop.hpp"

namespace strata::detail {
namespace {

constexpr int k_spin_rounds = 2000;        // steal sweeps before parking
constexpr std::uint32_t k_batch_cap = 32;  // steal-half cap beyond the NUMA node

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

std::uint64_t next_random(worker& w) noexcept {  // xorshift64*
  w.rng ^= w.rng >> 12;
  w.rng ^= w.rng << 25;
  w.rng ^= w.rng >> 27;
  return w.rng * 0x2545F4914F6CDD1Dull;
}

std::uint64_t now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// A task for this worker, or nullptr. Messages for its actors are moved
// into their mailboxes on the way (they run in the actors' turns).
// At most k_mail_per_pop messages per call, so a flood cannot hold the
// worker here; when it stops at that limit with mail possibly left,
// w.mail_backlog says so (the worker must not park on it: producers only
// wake a sleeping worker).
constexpr int k_mail_per_pop = 256;

[[gnu::noinline]] task* pop_inbox_items(worker& w) noexcept {
  task* t = nullptr;
  int mail = 0;
  w.mail_backlog = false;
  for (int tries = 0; tries < 64;) {
    switch (w.inbox.pop(t)) {
      case task_inbox::pop_status::item:
        w.inbox.publish_depth();
        if (t->how == completion::message) {
          deliver_from_inbox(w, t);
          if (++mail == k_mail_per_pop) {
            w.mail_backlog = true;
            return nullptr;
          }
          break;
        }
        w.counters.inbox.add();
        return t;
      case task_inbox::pop_status::empty:
        return nullptr;
      case task_inbox::pop_status::busy:  // a producer is between its two stores
        ++tries;
        cpu_relax();
        break;
    }
  }
  return nullptr;
}

// Checked before every task: an empty inbox (the common case) costs three
// loads here, not a call (about 29 instructions per task before, bank
// benchmark under callgrind).
inline task* pop_inbox(worker& w) noexcept {
  if (w.inbox.empty()) {
    w.mail_backlog = false;
    return nullptr;
  }
  return pop_inbox_items(w);
}

task* pop_injector(worker& w, std::size_t node) noexcept {
  task* t = w.rt->injectors[node]->pop();
  if (t != nullptr) w.counters.injector.add();
  return t;
}

std::size_t node_of(const worker& w) noexcept {
  return static_cast<std::size_t>(w.rt->plan.workers()[w.index].numa_node);
}

// far: also try the tiers beyond the NUMA node (package, remote).
task* steal_tiers(worker& w, bool far) noexcept {
  runtime_core& rt = *w.rt;
  const tier_list& tiers = rt.plan.tiers_of(w.index);
  for (std::size_t k = 0; k < tiers.size(); ++k) {
    const auto& victims = tiers[k].workers;
    const std::size_t n = victims.size();
    const bool batch = tiers[k].kind == tier_kind::package || tiers[k].kind == tier_kind::remote;
    if (batch && !far) break;  // tiers are ordered: everything after is beyond the node too
    const std::size_t start = n > 1 ? next_random(w) % n : 0;
    for (std::size_t j = 0; j < n; ++j) {
      const auto& victim = rt.stealers[victims[(start + j) % n]];
      w.counters.steal_attempts.add();
      auto r = victim.steal();
      if (!r) {
        w.counters.steal_failures.add();
        continue;
      }
      w.counters.steals_by_tier[k < k_max_tiers ? k : k_max_tiers - 1].add();
      w.counters.stolen.add();
      if (batch) {
        std::int64_t more = victim.shared_size() / 2;
        if (more > static_cast<std::int64_t>(k_batch_cap) - 1) more = k_batch_cap - 1;
        for (std::int64_t i = 0; i < more; ++i) {
          auto extra = victim.steal();
          if (!extra) break;
          w.counters.stolen.add();
          w.deque.push(extra.value);  // private: ours now; shared again on request
        }
      }
      return r.value;
    }
  }
  return nullptr;
}

task* other_injectors(worker& w) noexcept {
  const std::size_t mine = node_of(w);
  const std::size_t nodes = w.rt->injectors.size();
  for (std::size_t i = 1; i < nodes; ++i) {
    if (task* t = pop_injector(w, (mine + i) % nodes)) return t;
  }
  return nullptr;
}

// Every source in the documented order. Tiers beyond the NUMA node are
// tried only when `far` (every k_far_period-th idle round, and always in the
// parking re-check): a victim close by often gets work a moment later
// (after publishing on our request), and a local steal is much cheaper
// than a remote one.
constexpr int k_far_period = 4;

// find_work past the worker's own inbox and deque.
[[gnu::noinline]] task* find_elsewhere(worker& w, bool far) noexcept {
  if (task* t = pop_ready(w)) return t;  // an actor's turn
  if (task* t = pop_injector(w, node_of(w))) return t;
  if (task* t = steal_tiers(w, far)) return t;
  return far ? other_injectors(w) : nullptr;
}

// Inline up to the own deque, the source of almost every task in a busy
// worker: a call with six saved registers per task was about 15 of 42
// instructions here (bank benchmark, callgrind).
inline task* find_work(worker& w, bool far = true) noexcept {
  if (task* t = pop_inbox(w)) return t;
  if (task* t; w.deque.pop(t)) [[likely]] {
    if (w.deque.requested()) publish_and_wake(w);
    return t;
  }
  return find_elsewhere(w, far);
}

bool wake_claim(worker& target) noexcept {
  // seq_cst exchange: the one who flips 1 -> 0 owns the wake (pairs with the
  // parker's seq_cst store of 1 and its own cancel exchange).
  // No relaxed pre-check: on weak hardware it could read a stale 0 and miss
  // a parker that announced itself (store-buffering with stopping/idle).
  if (target.sleeping.exchange(0, std::memory_order_seq_cst) != 1) return false;
  target.idle->word.fetch_sub(k_sleeper, std::memory_order_seq_cst);  // seq_cst: part of the idle protocol
  futex_wake(target.sleeping, 1);
  return true;
}

std::uint64_t spinners_of(std::uint64_t word) noexcept { return word & 0xffffffffu; }
std::uint64_t sleepers_of(std::uint64_t word) noexcept { return word >> 32; }

// Leaves the spinning state; wakes one more if we were the last spinner and
// somebody sleeps (the last spinner to find work keeps the search going).
void stop_spinning_found_work(worker& w) noexcept {
  // seq_cst: part of the idle protocol (pairs with producers' fence + load).
  const std::uint64_t prev = w.idle->word.fetch_sub(k_spinner, std::memory_order_seq_cst);
  if (spinners_of(prev) == 1 && sleepers_of(prev) != 0) wake_one(*w.rt, w.index);
}

void cancel_park(worker& w) noexcept {
  if (w.sleeping.exchange(0, std::memory_order_seq_cst) == 1) {  // seq_cst: see wake_claim
    w.idle->word.fetch_sub(k_sleeper, std::memory_order_seq_cst);
  }
}

// No work found: spin, then park. Returns a task, or nullptr to re-loop
// (woken, or stopping).
// Before the spin cap: a few microseconds on the worker's own sources only
// (inbox, deque, ready actors), touching no other worker's lines. An actor
// conversation across workers (ping-pong) gets its reply within that time;
// without it the worker that just sent parked at once whenever the other
// one was spinning, and every message paid a futex wake (about 10 us here).
constexpr int k_local_spin_rounds = 256;

task* local_spin(worker& w) noexcept {
  for (int round = 0; round < k_local_spin_rounds; ++round) {
    if (task* t = pop_inbox(w)) return t;
    if (task* t; w.deque.pop(t)) return t;
    if (task* t = pop_ready(w)) return t;
    cpu_relax();
    cpu_relax();
  }
  return nullptr;
}

task* idle_phase(worker& w) {
  runtime_core& rt = *w.rt;
  w.pool.flush_outgoing();  // frames of other workers go home before we wait (frame_pool.hpp)
  const std::uint64_t start = now_ns();
  task* found = local_spin(w);
  if (found != nullptr) {
    w.counters.idle_ns.add(now_ns() - start);
    return found;
  }
  // Spin cap, per package: at most about half its busy workers spin, and
  // one spins as long as anybody anywhere is busy (relaxed loads: a heuristic).
  const std::uint64_t s = w.idle->word.load(std::memory_order_relaxed);
  const std::uint64_t in_pkg = w.idle->workers;
  const std::uint64_t idle_pkg = spinners_of(s) + sleepers_of(s) + 1;
  const std::uint64_t busy_pkg = in_pkg > idle_pkg ? in_pkg - idle_pkg : 0;
  std::uint64_t idle_all = 1;
  for (std::size_t p = 0; p < rt.num_packages; ++p) {
    const std::uint64_t x = rt.idle[p].word.load(std::memory_order_relaxed);
    idle_all += spinners_of(x) + sleepers_of(x);
  }
  const bool anyone_busy = rt.workers.size() > idle_all;
  if (2 * spinners_of(s) < busy_pkg || (spinners_of(s) == 0 && anyone_busy)) {
    w.idle->word.fetch_add(k_spinner, std::memory_order_seq_cst);  // seq_cst: part of the idle protocol
    for (int round = 0; round < k_spin_rounds && !found; ++round) {
      found = find_work(w, round % k_far_period == k_far_period - 1);
      if (found) {
        stop_spinning_found_work(w);
        break;
      }
      if (rt.stopping.load(std::memory_order_relaxed)) break;  // relaxed: re-checked below
      for (int i = 0; i < 16; ++i) cpu_relax();
      if ((round & 63) == 63) sched_yield();
    }
    if (!found) {
      w.idle->word.fetch_sub(k_spinner, std::memory_order_seq_cst);  // seq_cst: then re-check (Go's dance)
      found = find_work(w);
    }
  }
  if (!found && !rt.stopping.load(std::memory_order_acquire)) {
    // Two-phase park: announce, re-check everything, sleep or cancel.
    w.sleeping.store(1, std::memory_order_seq_cst);
    w.idle->word.fetch_add(k_sleeper, std::memory_order_seq_cst);
    found = find_work(w);
    if (found || w.mail_backlog || rt.stopping.load(std::memory_order_seq_cst)) {
      cancel_park(w);
    } else {
      w.counters.parks.add();
      while (w.sleeping.load(std::memory_order_acquire) == 1 && !rt.stopping.load(std::memory_order_acquire)) {
        futex_wait(w.sleeping, 1, 0);
      }
      cancel_park(w);  // stopping: take ourselves out if no waker did
      w.counters.wakeups.add();
    }
  }
  w.counters.idle_ns.add(now_ns() - start);
  return found;
}

}  // namespace

void set_current_worker(worker* w) noexcept { t_current_worker = w; }

void wake_one(runtime_core& rt, unsigned near) noexcept {
  // Nearest sleepers first: the woken worker steals from `near` cheaply.
  for (const auto& tier : rt.plan.tiers_of(near)) {
    for (unsigned v : tier.workers) {
      if (wake_claim(*rt.workers[v])) return;
    }
  }
  wake_claim(*rt.workers[near]);
}

void wake_worker(runtime_core& rt, unsigned index) noexcept { wake_claim(*rt.workers[index]); }

void wake_all(runtime_core& rt) noexcept {
  for (auto& w : rt.workers) {
    wake_claim(*w);
    futex_wake(w->sleeping, 1);
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
  if (w.deque.publish() > 0) {
    w.counters.publishes.add();
    maybe_wake(*w.rt, w.index);
  }
}

void poll_sources(worker& w) noexcept {
  w.ticks_left = k_injector_period;
  w.join_poll_at = w.counters.joins_inline.get() + k_injector_period;
  // Sampled here (every k_injector_period tasks) rather than on every push;
  // the real size (the cached top can be far behind the thieves).
  w.counters.high_water.max(static_cast<std::uint64_t>(w.deque.size()));
  if (task* t = pop_injector(w, node_of(w))) {
    w.deque.push(t);  // moved, not created: not counted as a spawn
    if (w.deque.requested() || w.idle->word.load(std::memory_order_relaxed) != 0) publish_and_wake(w);  // relaxed: hint
  }
  if (task* t = pop_inbox(w)) run_task(w, t);
  // One actor turn even while the deque is busy: tasks cannot starve actors.
  if (task* t = pop_ready(w)) run_task(w, t);
}

void help_until(worker& w, bool (*pred)(const void*), const void* ctx) {
  unsigned misses = 0;
  while (!pred(ctx)) {
    if (task* t = find_work(w, misses % k_far_period == k_far_period - 1)) {
      run_task(w, t);
      misses = 0;
      continue;
    }
    cpu_relax();
    if (++misses % 64 == 0) sched_yield();
  }
}

void free_frame_away(worker& w, task* t) noexcept { w.pool.free_to(w.rt->workers[t->home]->pool, t); }

void report_detached_exception(worker& w, std::exception_ptr e) noexcept {
  w.counters.detached_exceptions.add();
  // Reported once per runtime (the count is in stats()).
  if (w.rt->detached_errors_reported.fetch_add(1, std::memory_order_relaxed) != 0) return;  // relaxed: a count
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    what = ex.what();
  } catch (...) {
  }
  std::fprintf(stderr, "strata: a detached task threw: %s (further ones are counted in stats())\n", what.c_str());
}

void worker_loop(worker& w) {
  runtime_core& rt = *w.rt;
  for (;;) {
    task* t = find_work(w, false);
    if (t == nullptr) t = idle_phase(w);
    if (t != nullptr) {
      run_task(w, t);
      continue;
    }
    if (rt.stopping.load(std::memory_order_acquire)) {
      // Drain what may still be there (nothing, after wait_idle), then leave.
      if (task* last = find_work(w)) {
        run_task(w, last);
        continue;
      }
      return;
    }
  }
}

}  // namespace strata::detail
