// fib, serial baseline Ts: one plain call per node. noinline and an opaque
// argument keep the compiler from folding or hoisting the recursion
// (the serial-baseline trap: a compiler that sees the whole recursion
// may reduce it to a loop); it may still unroll it.
#include "fib/fib.hpp"

namespace strata_bench::fib {
namespace {

[[gnu::noinline]] std::uint64_t fib(int n) {
  return n < 2 ? static_cast<std::uint64_t>(n) : fib(n - 1) + fib(n - 2);
}

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] { return expect_equal("fib(30)", fib(opaque(k_n)), k_answer); };
}

}  // namespace strata_bench::fib
