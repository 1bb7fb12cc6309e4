#include "harness/measure.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <vector>

namespace strata_bench {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

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
  record rec = blank_record(b, r, threads);
  rec.params = which.params;
  const prepare_fn prepare = which.prepare;
  if (prepare == nullptr) {
    rec.check = "FAIL: no " + rec.runtime + " version in this binary";
    return rec;
  }

  repetition run;
  try {
    run = prepare(threads);
  } catch (const std::exception& e) {
    rec.check = std::string("FAIL: setup: ") + e.what();
    return rec;
  }

  std::string failure;
  std::vector<double> seconds;
  std::vector<double> rates;  // work / seconds of the timed runs that report work
  // run_index 0 is the warm-up.
  for (unsigned run_index = 0; run_index <= reps && failure.empty(); ++run_index) {
    try {
      const auto start = std::chrono::steady_clock::now();
      const verdict v = run();
      const auto stop = std::chrono::steady_clock::now();
      if (run_index > 0) {
        seconds.push_back(std::chrono::duration<double>(stop - start).count());
        if (v.work > 0.0 && seconds.back() > 0.0) {
          rates.push_back(v.work / seconds.back());
        }
      }
      if (!v.ok) {
        failure = v.detail;
      }
    } catch (const std::exception& e) {
      failure = std::string("exception: ") + e.what();
    }
    if (!failure.empty()) {
      failure += run_index == 0 ? " (warm-up run)"
                                : " (timed run " + std::to_string(run_index) + " of " +
                                      std::to_string(reps) + ")";
    }
  }
  try {
    run = nullptr;  // tear down the runtime and free the data, outside the timing
  } catch (const std::exception& e) {
    if (failure.empty()) {
      failure = std::string("teardown: ") + e.what();
    }
  }

  rec.reps = static_cast<unsigned>(seconds.size());
  if (!seconds.empty()) {
    rec.timed = true;
    rec.median_s = median_of(seconds);
    rec.min_s = *std::min_element(seconds.begin(), seconds.end());
    rec.max_s = *std::max_element(seconds.begin(), seconds.end());
  }
  if (!b.rate_unit.empty() && !rates.empty() && rates.size() == seconds.size()) {
    rec.rate = median_of(rates);
    rec.rate_unit = b.rate_unit;
  }
  rec.check = failure.empty() ? "ok" : "FAIL: " + failure;
  return rec;
}

}  // namespace strata_bench
