// What every benchmark file shares: the verdict of one repetition, the
// repetition itself, and the small helpers that keep the compiler from
// folding a benchmark into a constant.
//
// A benchmark exposes, per runtime, one function
//
//   repetition prepare_<runtime>(unsigned threads);
//
// which does everything that must stay outside the timed region (start the
// runtime with `threads` workers, allocate and first-touch input data) and
// returns the repetition: one timed run of the benchmark that verifies its own
// answer. The repetition owns what prepare created; destroying it tears the
// runtime down, again outside the timed region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>  // prepare functions share what the repetition owns
#include <sstream>
#include <string>

namespace strata_bench {

// The outcome of one repetition: ok, or what was wrong with the answer.
// Benchmarks with a rate (benchmark::rate_unit) also say how much work the
// run did, in units of that rate times seconds (GB for GB/s).
struct verdict {
  bool ok = true;
  std::string detail;  // empty when ok
  double work = 0.0;   // 0: no rate for this run
};

using repetition = std::function<verdict()>;
using prepare_fn = repetition (*)(unsigned threads);

template <class T>
verdict expect_equal(const char* quantity, const T& got, const T& want) {
  if (got == want) {
    return {};
  }
  std::ostringstream s;
  s.precision(17);
  s << quantity << " = " << got << ", expected " << want;
  return {false, s.str()};
}

// Reads a value through a volatile so that the benchmark input is not a
// compile-time constant (GCC and Clang otherwise fold or hoist pure
// recursions such as fib out of the repetition loop).
template <class T>
T opaque(T v) {
  volatile T x = v;
  return x;
}

// CPUs this process may run on (sched_getaffinity), at least 1.
unsigned usable_cpus();

}  // namespace strata_bench
