// cholesky on oneTBB: a tbb::flow::graph per run, one continue_node per
// operation, edges from the same dependence analysis as OpenMP's depend
// clauses (per tile: the last operation that updated it, and the readers
// since; an update waits for both, a read for the last update; duplicate
// edges dropped). Nodes without predecessors get the start message, then
// wait_for_all(). Building the graph is inside the timing, as the strata
// and OpenMP versions analyse their dependences inside theirs.
#include <algorithm>
#include <deque>
#include <vector>

#include <tbb/flow_graph.h>

#include "cholesky/cholesky.hpp"
#include "common/tbb_session.hpp"

namespace strata_bench::cholesky {
namespace {

using node_t = tbb::flow::continue_node<tbb::flow::continue_msg>;

struct tile_track {
  std::ptrdiff_t last_writer = -1;
  std::vector<std::size_t> readers;  // since the last writer
};

}  // namespace

repetition prepare_tbb(shape s, unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  const tiled_matrix& a = input(s);
  auto m = std::make_shared<tiled_matrix>(s);
  return [&a, session, m] {
    tiled_matrix& w = *m;
    load(w, a);
    session->run([&w] {
      const std::vector<op> list = ops(opaque(w.dims().tiles));
      tbb::flow::graph g;
      std::deque<node_t> nodes;
      std::vector<bool> has_pred(list.size(), false);
      std::vector<tile_track> track(w.dims().tiles * w.dims().tiles);
      std::vector<std::size_t> preds;
      for (std::size_t t = 0; t < list.size(); ++t) {
        const op o = list[t];
        nodes.emplace_back(g, [&w, o](const tbb::flow::continue_msg&) { run(w, o); });
        std::uint32_t row[2];
        std::uint32_t col[2];
        const std::size_t n_in = inputs(o, row, col);
        preds.clear();
        for (std::size_t d = 0; d < n_in; ++d) {
          tile_track& tr = track[w.index(row[d], col[d])];
          if (tr.last_writer >= 0) {
            preds.push_back(static_cast<std::size_t>(tr.last_writer));
          }
          tr.readers.push_back(t);
        }
        tile_track& out = track[w.index(o.i, o.j)];
        if (out.last_writer >= 0) {
          preds.push_back(static_cast<std::size_t>(out.last_writer));
        }
        preds.insert(preds.end(), out.readers.begin(), out.readers.end());
        out.readers.clear();
        out.last_writer = static_cast<std::ptrdiff_t>(t);
        std::sort(preds.begin(), preds.end());
        preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
        for (std::size_t pred : preds) {
          tbb::flow::make_edge(nodes[pred], nodes[t]);
        }
        has_pred[t] = !preds.empty();
      }
      for (std::size_t t = 0; t < list.size(); ++t) {
        if (!has_pred[t]) {
          nodes[t].try_put(tbb::flow::continue_msg{});
        }
      }
      g.wait_for_all();
    });
    return check(w);
  };
}

}  // namespace strata_bench::cholesky
