// skynet on strata: a strata::task_group per inner node, one task per child.
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

}  // namespace

repetition prepare_strata(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt] {
    const std::uint64_t r = rt->submit([] { return skynet(0, opaque(k_leaves)); }).get();
    return expect_equal("sum", r, k_answer);
  };
}

}  // namespace strata_bench::skynet
