// fib on oneTBB: a tbb::task_group per call.
#include <tbb/task_group.h>

#include "common/tbb_session.hpp"
#include "fib/fib.hpp"

namespace strata_bench::fib {
namespace {

std::uint64_t fib(int n) {
  if (n < 2) {
    return static_cast<std::uint64_t>(n);
  }
  std::uint64_t a = 0;
  tbb::task_group g;
  g.run([&a, n] { a = fib(n - 1); });
  const std::uint64_t b = fib(n - 2);
  g.wait();
  return a + b;
}

}  // namespace

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  return [session] {
    const std::uint64_t r = session->run([] { return fib(opaque(k_n)); });
    return expect_equal("fib(30)", r, k_answer);
  };
}

}  // namespace strata_bench::fib
