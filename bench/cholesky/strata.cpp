// cholesky on strata: one strata::dataflow_graph per run, one resource per
// lower tile (made when the configuration is prepared); every operation a
// graph task with in() on the tiles it reads and inout() on the one it
// updates, added in loop order, then wait().
//
// The graph is built and waited for inside one task on a worker
// (rt.submit(...).get()), as OpenMP's version builds inside `single` on a
// thread of its team and oneTBB's inside its arena: the builder is one of
// the P threads, and its wait() helps run the graph. Built from the
// harness thread instead, a third thread would share the cores with the P
// workers while it adds the tasks.
#include <memory>
#include <vector>

#include <strata/strata.hpp>

#include "cholesky/cholesky.hpp"
#include "common/strata_session.hpp"

namespace strata_bench::cholesky {
namespace {

// One resource per lower tile, made when the configuration is prepared.
std::shared_ptr<std::vector<strata::resource>> make_tiles(strata::runtime& rt, const tiled_matrix& m, shape s) {
  auto tiles = std::make_shared<std::vector<strata::resource>>(s.tiles * s.tiles);
  for (std::size_t i = 0; i < s.tiles; ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      (*tiles)[m.index(i, j)] = rt.make_resource();
    }
  }
  return tiles;
}

// Adds every operation to one graph in loop order, then waits for it.
void build_and_wait(strata::runtime& r, tiled_matrix& w, const std::vector<strata::resource>& tiles) {
  strata::dataflow_graph g{r};
  std::vector<strata::dependence> deps;
  for (const op& o : ops(opaque(w.dims().tiles))) {
    std::uint32_t row[2];
    std::uint32_t col[2];
    const std::size_t n_in = inputs(o, row, col);
    deps.clear();
    for (std::size_t d = 0; d < n_in; ++d) {
      deps.push_back(strata::in(tiles[w.index(row[d], col[d])]));
    }
    deps.push_back(strata::inout(tiles[w.index(o.i, o.j)]));
    g.task(deps, [&w, o] { run(w, o); });
  }
  g.wait();
}

// One configuration: the runtime, the matrix and its tile resources; each
// repetition reloads the matrix, then builds and waits for the graph on a
// worker (`on_worker`) or on the harness thread itself.
repetition prepare_with(shape s, unsigned threads, bool on_worker) {
  const tiled_matrix& a = input(s);
  auto rt = make_strata_runtime(threads);
  auto m = std::make_shared<tiled_matrix>(s);
  auto tiles = make_tiles(*rt, *m, s);
  return [&a, rt, m, tiles, on_worker] {
    tiled_matrix& w = *m;
    load(w, a);
    if (on_worker) {
      rt->submit([&w, &tiles = *tiles, &r = *rt] { build_and_wait(r, w, tiles); }).get();
    } else {
      build_and_wait(*rt, w, *tiles);
    }
    return check(w);
  };
}

}  // namespace

repetition prepare_strata(shape s, unsigned threads) { return prepare_with(s, threads, true); }

// The graph built and waited for by the harness thread itself (outside the
// workers), as a program's main thread would.
repetition prepare_strata_main(shape s, unsigned threads) { return prepare_with(s, threads, false); }

}  // namespace strata_bench::cholesky
