// fib on strata, two ways (two records): a strata::task_group per call (run
// the child, compute the other half inline, wait), and
// strata::parallel_invoke per call (the join frame on the caller's stack, a
// direct call when it was not stolen; invoke.hpp). The recursion starts on
// a worker (rt.submit).
#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "fib/fib.hpp"

namespace strata_bench::fib {
namespace {

std::uint64_t fib(int n) {
  if (n < 2) {
    return static_cast<std::uint64_t>(n);
  }
  std::uint64_t a = 0;
  strata::task_group g;
  g.run([&a, n] { a = fib(n - 1); });
  const std::uint64_t b = fib(n - 2);
  g.wait();
  return a + b;
}

std::uint64_t fib_invoke(int n) {
  if (n < 2) {
    return static_cast<std::uint64_t>(n);
  }
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  strata::parallel_invoke([&a, n] { a = fib_invoke(n - 1); }, [&b, n] { b = fib_invoke(n - 2); });
  return a + b;
}

}  // namespace

repetition prepare_strata_invoke(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return fib_invoke(opaque(k_n)); }).get();
    return expect_equal("fib(30)", r, k_answer);
  };
}

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return fib(opaque(k_n)); }).get();
    return expect_equal("fib(30)", r, k_answer);
  };
}

}  // namespace strata_bench::fib
