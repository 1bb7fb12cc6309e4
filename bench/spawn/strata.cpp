// spawn on strata: rt.spawn per task, then wait_idle. producer=main submits
// from the harness thread (outside the workers: its external lane),
// producer=worker from inside one task on a worker (its own deque).
#include <cstring>
#include <memory>

#include <strata/strata.hpp>

#include "common/strata_session.hpp"
#include "spawn/spawn.hpp"

namespace strata_bench::spawn {
namespace {

void spawn_all(strata::runtime& r, std::uint8_t* hit, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) r.spawn([hit, i] { mark(hit, i); });
}

}  // namespace

repetition prepare_strata_main(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  auto hit = std::make_shared<std::vector<std::uint8_t>>(tasks());
  return [rt, hit] {
    std::memset(hit->data(), 0, hit->size());
    spawn_all(*rt, hit->data(), opaque(hit->size()));
    rt->wait_idle();
    return check(*hit);
  };
}

repetition prepare_strata_worker(unsigned threads) {
  auto rt = make_strata_runtime(threads);
  auto hit = std::make_shared<std::vector<std::uint8_t>>(tasks());
  return [rt, hit] {
    std::memset(hit->data(), 0, hit->size());
    strata::runtime& r = *rt;
    std::uint8_t* h = hit->data();
    const std::size_t n = opaque(hit->size());
    r.submit([&r, h, n] { spawn_all(r, h, n); }).get();
    r.wait_idle();
    return check(*hit);
  };
}

}  // namespace strata_bench::spawn
