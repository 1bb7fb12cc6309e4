// UTS on strata: a strata::task_group per node, one task per child.
#include <strata/strata.hpp>

#include "common/slots.hpp"
#include "common/strata_session.hpp"
#include "uts/uts.hpp"

namespace strata_bench::uts {
namespace {

std::uint64_t count(const tree& t, const node& n) {
  const int k = num_children(t, n);
  if (k == 0) {
    return 1;
  }
  child_slots nodes(static_cast<std::size_t>(k));
  strata::task_group g;
  for (int i = 0; i < k; ++i) {
    g.run([&t, &n, &nodes, i] { nodes[static_cast<std::size_t>(i)] = count(t, child(n, i)); });
  }
  g.wait();
  return 1 + nodes.sum();
}

}  // namespace

repetition prepare_strata(const tree& t, unsigned threads) {
  auto rt = make_strata_runtime(threads);
  return [rt, &t] { return check(t, rt->submit([&t] { return count(t, root(t)); }).get()); };
}

}  // namespace strata_bench::uts
