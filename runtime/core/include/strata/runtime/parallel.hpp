// Loops over index ranges.
//
//   strata::parallel_for(rt, 0, n, [&](std::size_t i) { a[i] = b[i] + s * c[i]; });
//   strata::parallel_for(rt, 0, n, grain, [&](std::size_t lo, std::size_t hi) { ... });
//   strata::parallel_for(rt, 0, n, grain, body, strata::partition::numa_static);
//   double s = strata::parallel_reduce(rt, 0, n, 0.0,
//       [&](std::size_t lo, std::size_t hi, double acc) { ... return acc; },
//       [](double a, double b) { return a + b; });
//   double s = strata::parallel_reduce(rt, 0, n, 0.0, body, combine, grain, strata::partition::numa_static);
//
// The owners. Worker w of P owns the w-th contiguous chunk
// [lo + n*w/P, lo + n*(w+1)/P) of a range: the chunk first_touch writes on
// w, so its pages are on w's node.
//
// partition::numa_static is owner-computes: each chunk is delivered to its
// owner's inbox (never stolen) and run there in grain pieces, in order, so
// data first-touched by one such loop is local to the next one over the
// same range. A reduction combines the chunks' results in worker order.
//
// partition::automatic splits the range recursively (spawning the right
// halves down a spine, work-first) until pieces reach `grain` (default for
// the per-index form: n / (8 * workers)); idle workers steal the halves.
// When the loop is big (at least 4 pieces per worker) and starts where the
// other workers are free (from a thread outside them, or from a task while
// they all idle), the first level is the owners' chunks, each split and
// stolen from there: affinity first, stealing only to rebalance (as
// oneTBB's affinity partitioner and OpenMP's static schedule keep a range
// on one thread). Inside a busy computation the split starts on the
// calling worker, as before: an owner busy with other work would hold its
// chunk in its inbox. Under pinned_mpsc and hybrid, which do not steal, a
// loop of at least one piece per worker always starts on the owners'
// chunks (a static schedule); hybrid's spill queue then shares the pieces
// beyond its bound.
//
// Called from a task these run in the calling worker (helping while
// waiting); called from outside they are submitted and the caller blocks.
// Without `rt`, the runtime of the calling worker is used (usage_error
// outside a runtime).
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <strata/runtime/runtime.hpp>
#include <strata/runtime/task_group.hpp>

namespace strata {

enum class partition { automatic, numa_static };

namespace detail {

template <class Body>
void for_split(std::size_t lo, std::size_t hi, std::size_t grain, const Body& body) {
  task_group g;
  while (hi - lo > grain) {
    const std::size_t mid = lo + (hi - lo) / 2;
    g.run([mid, hi, grain, &body] { for_split(mid, hi, grain, body); });
    hi = mid;
  }
  body(lo, hi);
  g.wait();
}

template <class T, class Body, class Combine>
T reduce_split(std::size_t lo, std::size_t hi, std::size_t grain, const T& identity, const Body& body,
               const Combine& combine) {
  if (hi - lo <= grain) return body(lo, hi, identity);
  const std::size_t mid = lo + (hi - lo) / 2;
  std::optional<T> right;
  task_group g;
  g.run([&] { right.emplace(reduce_split(mid, hi, grain, identity, body, combine)); });
  T left = reduce_split(lo, mid, grain, identity, body, combine);
  g.wait();
  return combine(std::move(left), std::move(*right));
}

std::size_t default_grain(const runtime& rt, std::size_t n) noexcept;
runtime& current_runtime(const char* what);
bool on_worker_of(const runtime& rt) noexcept;

// True when every worker of rt but the caller's idles (spins or sleeps).
bool others_idle(runtime& rt) noexcept;

// True when an automatic loop of n indices in pieces of `grain` starts on
// the owners' chunks (see the top of the file).
// Under pinned_mpsc and hybrid, whenever there is a piece per worker: with
// no stealing a loop split on one worker would stay there.
bool policy_steals(runtime& rt) noexcept;
inline bool start_on_owners(runtime& rt, std::size_t n, std::size_t grain) {
  const unsigned p = rt.num_workers();
  if (p < 2) return false;
  if (!policy_steals(rt)) return n / grain >= p;
  if (n / grain < 4 * static_cast<std::size_t>(p)) return false;
  return !on_worker_of(rt) || others_idle(rt);
}

// Runs chunk(w, clo, chi) on the owner w of each non-empty chunk and hands
// each result to take(w, value) in worker order (R = void: no take).
// Every chunk already submitted is waited for before anything is rethrown:
// the chunks reference the caller's state (a submit can throw during
// shutdown).
template <class R, class Chunk, class Take>
void on_owners(runtime& rt, std::size_t lo, std::size_t hi, const Chunk& chunk, const Take& take) {
  const std::size_t n = hi - lo;
  const unsigned p = rt.num_workers();
  std::vector<future<R>> parts;
  parts.reserve(p);
  std::exception_ptr first;
  try {
    for (unsigned w = 0; w < p; ++w) {
      const std::size_t clo = lo + n * w / p;
      const std::size_t chi = lo + n * (w + 1) / p;
      if (clo == chi) continue;
      parts.push_back(rt.submit_on(worker_id{w}, [w, clo, chi, &chunk] { return chunk(w, clo, chi); }));
    }
  } catch (...) {
    first = std::current_exception();
  }
  for (auto& f : parts) {
    try {
      if constexpr (std::is_void_v<R>) {
        f.get();
      } else {
        take(f.get());
      }
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

struct no_take {
  void operator()() const noexcept {}
};

template <class Body>
void for_numa_static(runtime& rt, std::size_t lo, std::size_t hi, std::size_t grain, const Body& body) {
  on_owners<void>(
      rt, lo, hi,
      [grain, &body](unsigned, std::size_t clo, std::size_t chi) {
        for (std::size_t a = clo; a < chi; a += grain) body(a, a + grain < chi ? a + grain : chi);
      },
      no_take{});
}

// The owners' chunks reduced in order; their results combined in worker
// order. `split`: each chunk split and stealable (automatic) or run by its
// owner in grain pieces (numa_static).
template <class T, class Body, class Combine>
T reduce_on_owners(runtime& rt, std::size_t lo, std::size_t hi, std::size_t grain, const T& identity,
                   const Body& body, const Combine& combine, bool split) {
  std::optional<T> acc;
  on_owners<T>(
      rt, lo, hi,
      [grain, split, &identity, &body, &combine](unsigned, std::size_t clo, std::size_t chi) -> T {
        if (split) return reduce_split(clo, chi, grain, identity, body, combine);
        T part = identity;
        for (std::size_t a = clo; a < chi; a += grain) {
          part = body(a, a + grain < chi ? a + grain : chi, std::move(part));
        }
        return part;
      },
      [&acc, &combine](T v) {
        if (acc) {
          acc.emplace(combine(std::move(*acc), std::move(v)));
        } else {
          acc.emplace(std::move(v));
        }
      });
  return acc ? std::move(*acc) : identity;
}

}  // namespace detail

template <class Body>
void parallel_for(runtime& rt, std::size_t lo, std::size_t hi, std::size_t grain, Body&& body,
                  partition part = partition::automatic) {
  if (hi <= lo) return;
  if (grain == 0) grain = 1;
  if (part == partition::numa_static) {
    detail::for_numa_static(rt, lo, hi, grain, body);
    return;
  }
  if (detail::start_on_owners(rt, hi - lo, grain)) {
    detail::on_owners<void>(
        rt, lo, hi,
        [grain, &body](unsigned, std::size_t clo, std::size_t chi) { detail::for_split(clo, chi, grain, body); },
        detail::no_take{});
    return;
  }
  if (detail::on_worker_of(rt)) {
    detail::for_split(lo, hi, grain, body);
  } else {
    rt.submit([&] { detail::for_split(lo, hi, grain, body); }).get();
  }
}

template <class Body>
  requires std::is_invocable_v<Body&, std::size_t>
void parallel_for(runtime& rt, std::size_t lo, std::size_t hi, Body&& body) {
  if (hi <= lo) return;
  parallel_for(rt, lo, hi, detail::default_grain(rt, hi - lo), [&body](std::size_t a, std::size_t b) {
    for (std::size_t i = a; i < b; ++i) body(i);
  });
}

template <class Body>
void parallel_for(std::size_t lo, std::size_t hi, std::size_t grain, Body&& body,
                  partition part = partition::automatic) {
  parallel_for(detail::current_runtime("strata::parallel_for"), lo, hi, grain, std::forward<Body>(body), part);
}

template <class Body>
  requires std::is_invocable_v<Body&, std::size_t>
void parallel_for(std::size_t lo, std::size_t hi, Body&& body) {
  parallel_for(detail::current_runtime("strata::parallel_for"), lo, hi, std::forward<Body>(body));
}

template <class T, class Body, class Combine>
T parallel_reduce(runtime& rt, std::size_t lo, std::size_t hi, T identity, Body&& body, Combine&& combine,
                  std::size_t grain = 0, partition part = partition::automatic) {
  if (hi <= lo) return identity;
  if (grain == 0) grain = detail::default_grain(rt, hi - lo);
  if (part == partition::numa_static) {
    return detail::reduce_on_owners(rt, lo, hi, grain, identity, body, combine, false);
  }
  if (detail::start_on_owners(rt, hi - lo, grain)) {
    return detail::reduce_on_owners(rt, lo, hi, grain, identity, body, combine, true);
  }
  if (detail::on_worker_of(rt)) return detail::reduce_split(lo, hi, grain, identity, body, combine);
  return rt.submit([&] { return detail::reduce_split(lo, hi, grain, identity, body, combine); }).get();
}

template <class T, class Body, class Combine>
T parallel_reduce(std::size_t lo, std::size_t hi, T identity, Body&& body, Combine&& combine) {
  return parallel_reduce(detail::current_runtime("strata::parallel_reduce"), lo, hi, std::move(identity),
                         std::forward<Body>(body), std::forward<Combine>(combine));
}

}  // namespace strata
