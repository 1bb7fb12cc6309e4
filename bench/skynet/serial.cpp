// skynet, serial baseline: the same tree as plain calls.
#include "skynet/skynet.hpp"

namespace strata_bench::skynet {
namespace {

// Sum of the leaf ids first .. first + size - 1.
[[gnu::noinline]] std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) {
    return first;
  }
  const std::uint64_t part = size / k_fanout;
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < k_fanout; ++i) {
    sum += skynet(first + i * part, part);
  }
  return sum;
}

}  // namespace

repetition prepare_serial(unsigned /*threads*/) {
  return [] { return expect_equal("sum", skynet(0, opaque(k_leaves)), k_answer); };
}

}  // namespace strata_bench::skynet
