// bank on strata, lock mode: one resource per account, one detached
// spawn_with_access({write(from), write(to)}) per transfer (the shape of
// oneTBB's task_group::run per transfer), all spawned by one task on a
// worker (rt.submit(...).get()), then wait_idle(). A transfer is a plain
// spawn whose frame carries its two locks and its body, nothing allocated
// (default priority from a worker: the submission does not look at the
// locks, resource.hpp); the worker that runs it takes both locks, all or
// none. A refused one waits in the queue of the refusing account,
// and the release that lets it through runs it in place. A submission
// never runs a transfer itself: one that did could wait for a lock its own
// submitter holds (resource.cpp), so all 2*10^6 can be pending at once.
//
// producer=main submits the same transfers from the harness thread, as a
// program's main thread would (through its external lane).
#include <memory>
#include <vector>

#include <strata/strata.hpp>

#include "bank/bank.hpp"
#include "common/strata_session.hpp"

namespace strata_bench::bank {
namespace {

// A runtime of P workers, one resource per account, the balances.
struct setup {
  std::shared_ptr<strata::runtime> rt;
  std::shared_ptr<std::vector<strata::resource>> accounts;
  std::shared_ptr<std::vector<std::int64_t>> balance;
};

setup make_setup(unsigned threads) {
  setup s{make_strata_runtime(threads), std::make_shared<std::vector<strata::resource>>(),
          std::make_shared<std::vector<std::int64_t>>(k_accounts)};
  s.accounts->reserve(k_accounts);
  for (std::size_t i = 0; i < k_accounts; ++i) s.accounts->push_back(s.rt->make_resource());
  return s;
}

void spawn_all(strata::runtime& r, const workload& w, const strata::resource* acc, std::int64_t* b) {
  for (const transfer& t : w.transfers) {
    r.spawn_with_access({strata::write(acc[t.from]), strata::write(acc[t.to])}, [b, t] { apply(b, t); });
  }
}

}  // namespace

repetition prepare_strata(distribution d, unsigned threads) {
  const workload& w = workload_of(d);
  return [&w, s = make_setup(threads)] {
    std::int64_t* b = s.balance->data();
    reset(b);
    strata::runtime& r = *s.rt;
    const strata::resource* acc = s.accounts->data();
    r.submit([&r, &w, acc, b] { spawn_all(r, w, acc, b); }).get();
    r.wait_idle();
    return check(w, b);
  };
}

// The obvious program: the main thread (here the harness thread, outside
// the workers) submits every transfer, then waits.
repetition prepare_strata_main(distribution d, unsigned threads) {
  const workload& w = workload_of(d);
  return [&w, s = make_setup(threads)] {
    std::int64_t* b = s.balance->data();
    reset(b);
    spawn_all(*s.rt, w, s.accounts->data(), b);
    s.rt->wait_idle();
    return check(w, b);
  };
}

}  // namespace strata_bench::bank
