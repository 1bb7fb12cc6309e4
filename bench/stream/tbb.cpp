// stream on oneTBB: tbb::parallel_for with the static_partitioner for every
// pass and for the first touch (the same split of [0, n) each time; oneTBB
// does not pin its threads, so a block may still change thread and node).
#include <memory>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/tbb_session.hpp"
#include "stream/stream.hpp"

namespace strata_bench::stream {

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  auto s = std::make_shared<plain_arrays>(array_size());
  session->run([init = s.get()] {
    tbb::parallel_for(
        tbb::blocked_range<std::size_t>(0, init->n),
        [init](const tbb::blocked_range<std::size_t>& r) { init->init(r.begin(), r.end()); },
        tbb::static_partitioner{});
  });
  return [session, s] {
    const std::size_t n = opaque(s->n);
    plain_arrays* a = s.get();
    session->run([a, n] {
      for (unsigned k = 0; k < k_passes; ++k) {
        const unsigned to = written_by(++a->passes);
        double* dst = a->xy[to].data();
        const double* src = a->xy[1 - to].data();
        const double* c = a->c.data();
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, n),
            [dst, src, c](const tbb::blocked_range<std::size_t>& r) {
              triad(dst + r.begin(), src + r.begin(), c + r.begin(), r.size());
            },
            tbb::static_partitioner{});
      }
    });
    return s->finish_run();
  };
}

}  // namespace strata_bench::stream
