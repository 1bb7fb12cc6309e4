// UTS, serial baseline: depth-first recursion, one SHA-1 per node.
#include "uts/uts.hpp"

namespace strata_bench::uts {
namespace {

std::uint64_t count(const tree& t, const node& n) {
  const int k = num_children(t, n);
  std::uint64_t nodes = 1;
  for (int i = 0; i < k; ++i) {
    nodes += count(t, child(n, i));
  }
  return nodes;
}

}  // namespace

repetition prepare_serial(const tree& t, unsigned /*threads*/) {
  return [&t] { return check(t, count(t, root(t))); };
}

}  // namespace strata_bench::uts
