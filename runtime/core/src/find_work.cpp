// Finding work: where a worker looks, in which order, and how it steals.
//
// The order: own inbox (tasks for this worker alone; routed frames, such as
// messages for its actors, go to their work sources on the way), own deque
// (LIFO), the work sources (an actor's turn), own NUMA node's injector,
// the external threads' lanes (lanes.hpp), steal tier by tier, other nodes' injectors. Every k_injector_period-th
// task run (or productive poll of the sources) also polls the inbox, the
// injector and the sources, so a worker deep in a fork-join computation
// still serves them (run_task -> fairness_poll, run.cpp).
//
// Stealing: tiers come from the placement plan (nearest first). Within a
// tier the first victim is random, then round robin. Within the NUMA node
// (core, l3, numa tiers) a thief takes one task; beyond it (package, remote)
// it takes half of the victim's shared part, up to 32, one CAS each, and
// keeps the rest on its own deque, so a remote transfer is paid once per
// batch. `lost` moves on to the next victim; `empty` also asks the victim
// to share (the deque's request flag).
//
// Under pinned_mpsc a worker looks at its own queues and sources only;
// under hybrid also at the injectors, which are its spill queues, and never
// at a victim (policy.cpp).
#include "find_work.hpp"

#include <strata/runtime/ext/assert.hpp>

#include "injector.hpp"
#include "lanes.hpp"

namespace strata::detail {
namespace {

constexpr std::uint32_t k_batch_cap = 32;  // steal-half cap beyond the NUMA node
// Routed frames handed to their sources per inbox pop, so that a flood of
// messages cannot hold the worker in its inbox.
constexpr int k_routed_per_pop = 256;

std::uint64_t next_random(worker& w) noexcept {  // xorshift64*
  w.rng ^= w.rng >> 12;
  w.rng ^= w.rng << 25;
  w.rng ^= w.rng >> 27;
  return w.rng * 0x2545F4914F6CDD1Dull;
}

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
      std::uint64_t taken = 1;
      if (batch) {
        std::int64_t more = victim.shared_size() / 2;
        if (more > static_cast<std::int64_t>(k_batch_cap) - 1) more = k_batch_cap - 1;
        for (std::int64_t i = 0; i < more; ++i) {
          auto extra = victim.steal();
          if (!extra) break;
          w.counters.stolen.add();
          ++taken;
          w.deque.push(extra.value);  // private: ours now; shared again on request
        }
      }
      if (w.trace != nullptr) [[unlikely]] {
        const auto tier_bits = static_cast<std::uint8_t>((static_cast<unsigned>(tiers[k].kind) << 4) | (k & 15u));
        w.trace->instant(trace_kind::steal, victims[(start + j) % n], 0, taken, 0, tier_bits);
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

}  // namespace

task* pop_injector(worker& w, std::size_t node) noexcept {
  task* t = w.rt->injectors[node]->pop();
  if (t != nullptr) w.counters.injector.add();
  return t;
}

std::size_t node_of(const worker& w) noexcept {
  return static_cast<std::size_t>(w.rt->plan.workers()[w.index].numa_node);
}

task* pop_inbox_items(worker& w) noexcept {
  task* t = nullptr;
  int routed = 0;
  w.inbox_backlog = false;
  for (int tries = 0; tries < 64;) {
    switch (w.inbox.pop(t)) {
      case task_inbox::pop_status::item:
        w.inbox.publish_depth();
        if (t->how == completion::routed) {
          STRATA_ASSERT(t->sink < sources_of(w), "a routed frame names a work source of its worker");
          w.sources[t->sink]->accept(w, t);
          if (++routed == k_routed_per_pop) {
            w.inbox_backlog = true;
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

task* find_shared(worker& w, bool far) noexcept {
  const runtime_core& rt = *w.rt;
  if (!rt.shares) return nullptr;  // pinned_mpsc: a worker runs only its own work (policy.cpp)
  if (task* t = pop_injector(w, node_of(w))) return t;
  if (rt.steals) {  // hybrid: the injectors (its spill queues) only
    if (task* t = take_from_lanes(w)) return t;
    if (task* t = steal_tiers(w, far)) return t;
  }
  return far ? other_injectors(w) : nullptr;
}

bool sources_ready(worker& w) noexcept {
  const unsigned n = sources_of(w);
  for (unsigned i = 0; i < n; ++i) {
    if (w.sources[i]->ready(w)) return true;
  }
  return false;
}

std::size_t poll_sources(worker& w, std::size_t budget) noexcept {
  const unsigned n = sources_of(w);
  std::size_t ran = 0;
  for (unsigned i = 0; i < n; ++i) ran += w.sources[i]->poll(w, budget);
  return ran;
}

bool run_elsewhere(worker& w, bool far) noexcept {
  if (sources_of(w) != 0) {
    if (poll_sources(w, k_source_budget) != 0) {
      // A productive poll counts toward the fairness poll like a task, so a
      // worker kept busy by its sources still serves its injector.
      if (--w.ticks_left <= 0) fairness_poll(w);
      return true;
    }
  }
  if (task* t = find_shared(w, far)) {
    run_task(w, t);
    return true;
  }
  return false;
}

}  // namespace strata::detail
