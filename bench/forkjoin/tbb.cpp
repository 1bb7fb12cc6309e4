// forkjoin on oneTBB: per iteration a parallel_for over [0, P) with grain 1
// and the simple_partitioner (one task per index), inside the arena.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common/tbb_session.hpp"
#include "forkjoin/forkjoin.hpp"

namespace strata_bench::forkjoin {

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  return [session, threads] {
    std::vector<counter> counters(threads);
    const std::uint64_t iterations = opaque(k_iterations);
    session->run([&counters, iterations] {
      for (std::uint64_t it = 0; it < iterations; ++it) {
        tbb::parallel_for(
            tbb::blocked_range<std::size_t>(0, counters.size(), 1),
            [&counters](const tbb::blocked_range<std::size_t>& r) {
              for (std::size_t i = r.begin(); i != r.end(); ++i) {
                ++counters[i].value;
              }
            },
            tbb::simple_partitioner{});
      }
    });
    return check(counters, iterations);
  };
}

}  // namespace strata_bench::forkjoin
