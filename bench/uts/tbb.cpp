// UTS on oneTBB: a task_group per node, one task per child.
#include <tbb/task_group.h>

#include "common/slots.hpp"
#include "common/tbb_session.hpp"
#include "uts/uts.hpp"

namespace strata_bench::uts {
namespace {

std::uint64_t count(const tree& t, const node& n) {
  const int k = num_children(t, n);
  if (k == 0) {
    return 1;
  }
  child_slots nodes(static_cast<std::size_t>(k));
  tbb::task_group g;
  for (int i = 0; i < k; ++i) {
    g.run([&t, &n, &nodes, i] { nodes[static_cast<std::size_t>(i)] = count(t, child(n, i)); });
  }
  g.wait();
  return 1 + nodes.sum();
}

}  // namespace

repetition prepare_tbb(const tree& t, unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  return [session, &t] { return check(t, session->run([&t] { return count(t, root(t)); })); };
}

}  // namespace strata_bench::uts
