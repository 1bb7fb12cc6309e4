// skynet on strata, two ways (two records): a strata::task_group per inner
// node with one task per child, and strata::parallel_invoke splitting each
// node's 10 children in halves (9 joins per inner node, every child still
// its own branch; invoke.hpp).
#include <strata/strata.hpp>

#include "common/slots.hpp"
#include "common/strata_session.hpp"
#include "skynet/skynet.hpp"

namespace strata_bench::skynet {
namespace {

std::uint64_t skynet(std::uint64_t first, std::uint64_t size) {
  if (size == 1) {
    return first;
  }
  const std::uint64_t part = size / k_fanout;
  child_slots sums(k_fanout);
  strata::task_group g;
  for (std::uint64_t i = 0; i < k_fanout; ++i) {
    g.run([first, part, i, &sums] { sums[i] = skynet(first + i * part, part); });
  }
  g.wait();
  return sums.sum();
}

std::uint64_t skynet_invoke(std::uint64_t first, std::uint64_t size);

// The sum of children lo..hi-1 of the node [first, first + k_fanout * part).
std::uint64_t children(std::uint64_t first, std::uint64_t part, std::uint64_t lo, std::uint64_t hi) {
  if (hi - lo == 1) {
    return skynet_invoke(first + lo * part, part);
  }
  const std::uint64_t mid = lo + (hi - lo) / 2;
  std::uint64_t right = 0;
  std::uint64_t left = 0;
  strata::parallel_invoke([&right, first, part, mid, hi] { right = children(first, part, mid, hi); },
                          [&left, first, part, lo, mid] { left = children(first, part, lo, mid); });
  return left + right;
}

std::uint64_t skynet_invoke(std::uint64_t first, std::uint64_t size) {
  if (size == 1) {
    return first;
  }
  return children(first, size / k_fanout, 0, k_fanout);
}

}  // namespace

repetition prepare_strata_invoke(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return skynet_invoke(0, opaque(k_leaves)); }).get();
    return expect_equal("sum", r, k_answer);
  };
}

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return skynet(0, opaque(k_leaves)); }).get();
    return expect_equal("sum", r, k_answer);
  };
}

}  // namespace strata_bench::skynet
