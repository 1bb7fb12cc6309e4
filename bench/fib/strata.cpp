// fib on strata: a strata::task_group per call (run the child, compute the
// other half inline, wait). The recursion starts on a worker (rt.submit).
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

}  // namespace

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return fib(opaque(k_n)); }).get();
    return expect_equal("fib(30)", r, k_answer);
  };
}

}  // namespace strata_bench::fib
