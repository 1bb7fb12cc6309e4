#include "harness/measure.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
#include <strata/runtime/profile.hpp>
#endif

namespace strata_bench {
namespace {

// The reader offered by the prepare function running now (main thread only).
counter_reader g_offered;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void offer_counters(counter_reader read) { g_offered = std::move(read); }

std::string params_of(const benchmark& b) {
  return b.params_as_run != nullptr ? b.params_as_run() : std::string(b.params);
}

std::vector<version> versions_of(const benchmark& b, runtime_id r) {
  std::vector<version> out;
  const std::string params = params_of(b);
  if (const prepare_fn p = b.prepare[static_cast<std::size_t>(r)]; p != nullptr) {
    out.push_back({params, p});
  }
  for (const variant& v : b.variants) {
    if (v.runtime == r && v.prepare != nullptr) {
      out.push_back({params.empty() ? std::string(v.params) : params + " " + std::string(v.params), v.prepare,
                     v.min_threads});
    }
  }
  return out;
}

record blank_record(const benchmark& b, runtime_id r, unsigned threads) {
  record rec;
  rec.bench = b.name;
  rec.params = params_of(b);
  rec.runtime = name(r);
  rec.threads = threads;
  return rec;
}

record measure(const benchmark& b, runtime_id r, unsigned threads, unsigned reps) {
  return measure(b, r, version{params_of(b), b.prepare[static_cast<std::size_t>(r)]}, threads, reps);
}

record measure(const benchmark& b, runtime_id r, const version& which, unsigned threads, unsigned reps) {
  return measure_group(b, {configuration{r, which, threads}}, reps).front();
}

namespace {

// One configuration while its group is measured.
struct in_flight {
  record rec;
  repetition run;        // empty: no version, or its setup failed
  std::string failure;  // the first failure; the configuration stops running
  std::vector<double> seconds;
  std::vector<double> rates;  // work / seconds of the timed runs that report work
  double warm_up_s = 0.0;
  counter_reader counters;  // offered by its prepare; empty: none
  std::string region;       // the profile region of its timed runs: "bench.<name>"
  std::vector<std::pair<std::string, double>> counted;  // summed over the timed runs
};

// Adds after - before, name by name, to sum.
void add_difference(std::vector<std::pair<std::string, double>>& sum,
                    const std::vector<std::pair<std::string, double>>& before,
                    const std::vector<std::pair<std::string, double>>& after) {
  for (const auto& now : after) {
    double was = 0.0;
    for (const auto& then : before) {
      if (then.first == now.first) was = then.second;
    }
    auto it = std::find_if(sum.begin(), sum.end(), [&](const auto& kv) { return kv.first == now.first; });
    if (it == sum.end()) it = sum.insert(sum.end(), {now.first, 0.0});
    it->second += now.second - was;
  }
}

// When a configuration of a group ran its warm-up in less than this, every
// configuration of the group gets an untimed run right before each timed
// one (see measure_group in measure.hpp).
constexpr double k_primed_below_s = 0.1;

// Run run_index (0: the warm-up) of c, timed; primer: an untimed run
// before timed run run_index.
void run_once(in_flight& c, unsigned run_index, unsigned reps, bool primer = false) {
  try {
    const bool count = c.counters && run_index != 0 && !primer;
    std::vector<std::pair<std::string, double>> before;
    if (count) before = c.counters();
#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
    // A likwid Marker region on the main thread per timed run (a no-op
    // without STRATA_WITH_LIKWID): likwid-perfctr -m reports each benchmark.
    std::optional<strata::profile::region> marked;
    if (run_index != 0 && !primer) marked.emplace(c.region.c_str());
#endif
    const auto start = std::chrono::steady_clock::now();
    const verdict v = c.run();
    const auto stop = std::chrono::steady_clock::now();
#if defined(STRATA_BENCH_HAVE_RUNTIME) && !defined(STRATA_BENCH_LLVM_HELPER)
    marked.reset();
#endif
    if (count) add_difference(c.counted, before, c.counters());
    if (run_index == 0) {
      c.warm_up_s = std::chrono::duration<double>(stop - start).count();
    } else if (!primer) {
      c.seconds.push_back(std::chrono::duration<double>(stop - start).count());
      if (v.work > 0.0 && c.seconds.back() > 0.0) {
        c.rates.push_back(v.work / c.seconds.back());
      }
    }
    if (!v.ok) {
      c.failure = v.detail;
    }
  } catch (const std::exception& e) {
    c.failure = std::string("exception: ") + e.what();
  }
  if (!c.failure.empty()) {
    const std::string timed = "timed run " + std::to_string(run_index) + " of " + std::to_string(reps);
    c.failure += run_index == 0 ? " (warm-up run)" : primer ? " (untimed run before " + timed + ")" : " (" + timed + ")";
  }
}

// Tears c down (its runtime, its data), outside the timing.
void tear_down(in_flight& c) {
  try {
    c.counters = nullptr;  // holds the runtime weakly; it goes with the run
    c.run = nullptr;
  } catch (const std::exception& e) {
    if (c.failure.empty()) {
      c.failure = std::string("teardown: ") + e.what();
    }
  }
}

// Position k of round r: rounds start one further along the list each
// time and alternate direction, so no configuration always follows the
// same one (what a run leaves behind, cache contents or threads still
// spinning, does not always land on the same neighbour).
std::size_t turn_of(std::size_t k, unsigned r, std::size_t n) noexcept {
  return r % 2 == 0 ? (k + r) % n : (n - 1 - k + r) % n;
}

void finish(const benchmark& b, in_flight& c) {
  record& rec = c.rec;
  rec.reps = static_cast<unsigned>(c.seconds.size());
  if (!c.seconds.empty()) {
    rec.timed = true;
    rec.median_s = median_of(c.seconds);
    rec.min_s = *std::min_element(c.seconds.begin(), c.seconds.end());
    rec.max_s = *std::max_element(c.seconds.begin(), c.seconds.end());
  }
  if (!b.rate_unit.empty() && !c.rates.empty() && c.rates.size() == c.seconds.size()) {
    rec.rate = median_of(c.rates);
    rec.rate_unit = b.rate_unit;
  }
  rec.check = c.failure.empty() ? "ok" : "FAIL: " + c.failure;
  if (!c.seconds.empty()) {
    const auto runs = static_cast<double>(c.seconds.size());
    for (const auto& [name, sum] : c.counted) rec.counters.emplace_back(name, sum / runs);
  }
}

}  // namespace

std::vector<record> measure_group(const benchmark& b, const std::vector<configuration>& group, unsigned reps,
                                  const std::function<void(runtime_id)>& before) {
  std::vector<in_flight> all(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) {
    const configuration& g = group[i];
    in_flight& c = all[i];
    c.rec = blank_record(b, g.runtime, g.threads);
    c.region = "bench." + std::string(b.name);
    c.rec.params = g.which.params;
    if (g.which.prepare == nullptr) {
      c.failure = "no " + c.rec.runtime + " version in this binary";
      continue;
    }
    if (before) {
      before(g.runtime);
    }
    try {
      g_offered = nullptr;
      c.run = g.which.prepare(g.threads);
      c.counters = std::move(g_offered);
      g_offered = nullptr;
      if (!c.run) {
        c.failure = "setup: the prepare function returned no repetition";
      }
    } catch (const std::exception& e) {
      c.failure = std::string("setup: ") + e.what();
    }
  }
  const std::size_t n = all.size();
  bool primed = false;  // decided once for the group, after the warm-up round
  for (unsigned run_index = 0; run_index <= reps; ++run_index) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = turn_of(k, run_index, n);
      in_flight& c = all[i];
      if (!c.run || !c.failure.empty()) {
        continue;
      }
      if (before) {
        before(group[i].runtime);
      }
      if (primed) {
        run_once(c, run_index, reps, true);
      }
      if (c.failure.empty()) {
        run_once(c, run_index, reps);
      }
      if (!c.failure.empty()) {
        tear_down(c);  // at once: a failed runtime may still be busy
      }
    }
    if (run_index == 0) {
      // Every configuration of the group is treated alike: all primed when
      // any of them ran its warm-up in under k_primed_below_s.
      for (const in_flight& c : all) {
        primed = primed || (c.run && c.failure.empty() && c.warm_up_s < k_primed_below_s);
      }
    }
  }
  std::vector<record> out;
  for (in_flight& c : all) {
    tear_down(c);
    finish(b, c);
    out.push_back(std::move(c.rec));
  }
  return out;
}

}  // namespace strata_bench
