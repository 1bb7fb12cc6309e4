// stream: the STREAM triad, dst[i] = src[i] + q * c[i], over n = 2^25
// doubles per array (256 MiB each, 768 MiB in all), 10 passes per timed run.
// Bandwidth is counted as McCalpin counts it, 24 bytes per element and pass
// (two reads, one write; the write-allocate read is not credited).
//
// Two arrays, x and y, take turns: pass 1 reads x and writes y, pass 2 reads
// y and writes x, and so on, while c is only read. Each pass is still one
// triad (two streams in, one out), but its result feeds the next pass, so
// after T passes, warm-up included, the array written last holds
//
//   initial(i) + T * q * c(i)          (small integers: exact in a double)
//
// and an element that any pass skipped, or computed from the wrong index,
// stays wrong for good. The check after every run compares one element in
// every block of k_check_stride (at a varying offset) and the last element
// with that formula, exactly; it reads ~n/4096 elements, well under 1 % of a
// run. A plain triad would rewrite the same values every pass and could not
// tell a skipped chunk from a done one.
//
// Placement is the point of this benchmark: every version allocates
// untouched pages (common/untouched.hpp or
// strata's allocator) and decides who writes them first, outside the timed
// region. serial: the calling thread. omp / tbb: their static loop, the one
// the triad uses. strata: one record per placement (stream/strata_arrays.hpp).
//
// Quick tests shrink n with STRATA_BENCH_STREAM_N (whole number >= 1).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/bench.hpp"
#include "common/untouched.hpp"

namespace strata_bench::stream {

inline constexpr std::size_t k_default_n = std::size_t{1} << 25;
inline constexpr std::size_t k_max_n = std::size_t{1} << 34;
inline constexpr const char* k_n_variable = "STRATA_BENCH_STREAM_N";
inline constexpr unsigned k_passes = 10;             // triads per timed run
inline constexpr double k_q = 3.0;                   // STREAM's scalar
inline constexpr double k_bytes_per_element = 24.0;  // McCalpin: 2 loads + 1 store
inline constexpr std::size_t k_check_stride = 4096;

// Elements per array: STRATA_BENCH_STREAM_N, else 2^25. Throws
// std::invalid_argument when the variable is not a number in [1, 2^34].
std::size_t array_size();
// "n=2^25" (or the override), for the records.
std::string params();

// Initial contents: x holds initial(i) (pass 1 reads it), y holds 0.
inline double initial(std::size_t i) noexcept { return static_cast<double>(i % 1024); }
inline double c_value(std::size_t i) noexcept { return static_cast<double>(i % 13 + 1); }
inline double expected(std::size_t i, std::size_t passes) noexcept {
  return initial(i) + static_cast<double>(passes) * k_q * c_value(i);
}

// Which of the two arrays pass number `pass` (1-based) writes: 1 = y, 0 = x.
// After T passes the result is in array T % 2 (x when T == 0).
inline unsigned written_by(std::size_t pass) noexcept { return static_cast<unsigned>(pass % 2); }

// One triad over [0, count) of the given pointers: the kernel every version
// runs. Not inlined, so it is the same machine code in every version (inlined
// into a caller with many live values, GCC spilled the loop's pointers).
[[gnu::noinline]] inline void triad(double* __restrict dst, const double* __restrict src, const double* __restrict c,
                  std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    dst[i] = src[i] + k_q * c[i];
  }
}

// GB moved by one timed run (k_passes triads), the work behind the rate.
inline double gigabytes_per_run(std::size_t n) noexcept {
  return k_passes * k_bytes_per_element * static_cast<double>(n) * 1e-9;
}

// The sampled check: result(i) is element i of the array written last,
// after `passes` passes in all.
template <class Result>
verdict check(std::size_t n, std::size_t passes, const Result& result) {
  auto one = [&](std::size_t i) -> verdict {
    const double got = result(i);
    const double want = expected(i, passes);
    if (got == want) {
      return {};
    }
    return expect_equal(("element " + std::to_string(i) + " after " + std::to_string(passes) + " passes").c_str(),
                        got, want);
  };
  for (std::size_t block = 0; block * k_check_stride < n; ++block) {
    const std::size_t i = block * k_check_stride + (block * 61) % k_check_stride;
    if (i < n) {
      if (verdict v = one(i); !v.ok) {
        return v;
      }
    }
  }
  return one(n - 1);
}

// The three contiguous arrays of the serial, omp and tbb versions, untouched
// until the version's own loop calls init() over its share of [0, n).
struct plain_arrays {
  explicit plain_arrays(std::size_t size) : n(size), xy{untouched_array(size), untouched_array(size)}, c(size) {}

  void init(std::size_t lo, std::size_t hi) noexcept {
    double* x = xy[0].data();
    double* y = xy[1].data();
    double* cc = c.data();
    for (std::size_t i = lo; i < hi; ++i) {
      x[i] = initial(i);
      y[i] = 0.0;
      cc[i] = c_value(i);
    }
  }
  // The end of a timed run: the check, and the GB it moved.
  verdict finish_run() const {
    const double* result = xy[written_by(passes)].data();
    verdict v = check(n, passes, [result](std::size_t i) { return result[i]; });
    v.work = gigabytes_per_run(n);
    return v;
  }

  std::size_t n;
  untouched_array xy[2];  // x, y: written in turn
  untouched_array c;
  std::size_t passes = 0;  // triads done so far, warm-up included
};

// Where the strata version puts its pages (stream/strata_arrays.hpp).
enum class placement { serial_init, interleaved, first_touch, per_node };
inline constexpr placement k_placements[] = {placement::serial_init, placement::interleaved,
                                             placement::first_touch, placement::per_node};
constexpr std::string_view name(placement p) noexcept {
  switch (p) {
    case placement::serial_init: return "serial-init";
    case placement::interleaved: return "interleaved";
    case placement::first_touch: return "first-touch";
    case placement::per_node: return "per-node";
  }
  return "?";
}

repetition prepare_serial(unsigned threads);
repetition prepare_tbb(unsigned threads);
repetition prepare_omp(unsigned threads);
repetition prepare_strata(placement where, unsigned threads);

}  // namespace strata_bench::stream
