// spawn on oneTBB: tbb::task_group::run per task from the arena's master
// thread (the harness thread inside arena.execute), then wait().
#include <cstring>
#include <memory>

#include <tbb/task_group.h>

#include "common/tbb_session.hpp"
#include "spawn/spawn.hpp"

namespace strata_bench::spawn {

repetition prepare_tbb(unsigned threads) {
  auto session = std::make_shared<tbb_session>(threads);
  auto hit = std::make_shared<std::vector<std::uint8_t>>(tasks());
  return [session, hit] {
    std::memset(hit->data(), 0, hit->size());
    std::uint8_t* h = hit->data();
    const std::size_t n = opaque(hit->size());
    session->run([h, n] {
      tbb::task_group g;
      for (std::size_t i = 0; i < n; ++i) g.run([h, i] { mark(h, i); });
      g.wait();
    });
    return check(*hit);
  };
}

}  // namespace strata_bench::spawn
