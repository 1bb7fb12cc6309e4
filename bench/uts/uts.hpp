// UTS, the Unbalanced Tree Search benchmark (Olivier et al., LCPC 2006):
// count the nodes of an implicit random tree whose shape is only known by
// expanding it. Each node is a SHA-1 digest (see sha1.hpp); its number of
// children is drawn from the last 4 bytes of that digest:
//
//   rand(node)  = big-endian uint32 of digest bytes 16..19, & 0x7fffffff
//   u(node)     = rand(node) / 2^31                      (uniform in [0, 1))
//   binomial:   root: floor(b0) children; other nodes: m children if u < q,
//               else none (q*m close to 1: a long, thin, unpredictable tree)
//   geometric:  b = b0 while height < d (shape "fixed"), else 0;
//               p = 1 / (1 + b); children = floor(log(1 - u) / log(1 - p))
//   cap:        the binomial root at ceil(b0), every other node at 100
//
// The standard UTS trees T1 and T3 (their node counts are the check):
//   T1  -t 1 -a 3 -d 10 -b 4 -r 19                  4,130,071 nodes
//   T3  -t 0 -b 2000 -q 0.124875 -m 8 -r 42          4,112,897 nodes, depth 1,572
//
// Every version spawns one task per child; the child task derives its own
// digest and returns its subtree's node count into a slot of the parent
// (child_slots), reduced after the join.
#pragma once

#include <cstdint>

#include "common/bench.hpp"
#include "uts/sha1.hpp"

namespace strata_bench::uts {

enum class tree_kind { binomial, geometric_fixed };

struct tree {
  tree_kind kind;
  double b0;            // -b: root branching factor (geometric: expected children)
  int depth;            // -d: geometric depth limit
  double q;             // -q: binomial probability of a node having children
  int m;                // -m: binomial children of a non-leaf
  int seed;             // -r: root seed
  std::uint64_t nodes;  // the known answer
};

inline constexpr tree k_t1{tree_kind::geometric_fixed, 4.0, 10, 0.0, 0, 19, 4130071};
inline constexpr tree k_t3{tree_kind::binomial, 2000.0, 0, 0.124875, 8, 42, 4112897};

struct node {
  digest id;
  int height;
};

node root(const tree& t) noexcept;
node child(const node& parent, int index) noexcept;
int num_children(const tree& t, const node& n) noexcept;

repetition prepare_serial(const tree& t, unsigned threads);
repetition prepare_tbb(const tree& t, unsigned threads);
repetition prepare_omp(const tree& t, unsigned threads);
repetition prepare_strata(const tree& t, unsigned threads);

inline verdict check(const tree& t, std::uint64_t counted) {
  return expect_equal("nodes", counted, t.nodes);
}

}  // namespace strata_bench::uts
