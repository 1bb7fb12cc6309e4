// UTS on OpenMP: one `omp task` per child, `taskwait`, then the parent adds
// the children's counts. Pointers, not references, cross into the tasks
// (firstprivate of a reference is not portable before OpenMP 5).
#include <omp.h>

#include "common/slots.hpp"
#include "uts/uts.hpp"

namespace strata_bench::uts {
namespace {

std::uint64_t count(const tree* t, const node* n) {
  const int k = num_children(*t, *n);
  if (k == 0) {
    return 1;
  }
  child_slots nodes(static_cast<std::size_t>(k));
  std::uint64_t* slot = nodes.data();
  for (int i = 0; i < k; ++i) {
#pragma omp task firstprivate(t, n, slot, i)
    {
      const node c = child(*n, i);
      slot[i] = count(t, &c);
    }
  }
#pragma omp taskwait
  return 1 + nodes.sum();
}

}  // namespace

repetition prepare_omp(const tree& t, unsigned threads) {
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  return [p, &t] {
    std::uint64_t nodes = 0;
    const node r = root(t);
    const tree* tp = &t;
#pragma omp parallel num_threads(p) shared(nodes, r) firstprivate(tp)
#pragma omp single
    nodes = count(tp, &r);
    return check(t, nodes);
  };
}

}  // namespace strata_bench::uts
