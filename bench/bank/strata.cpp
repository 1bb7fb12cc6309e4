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
// Submitting from inside a task measured faster than from the harness thread
// (2 vCPU VM, 2*10^5 transfers: uniform 1.05 vs 0.27 Mtransfers/s at 1
// worker, 1.07 vs 0.69 at 2; Zipf 0.49 vs 0.22 and 0.63 vs 0.45, with the
// earlier design that took the locks at submission), likely because a task
// submitted from outside goes into the node's injector and one submitted on
// a worker onto that worker's own deque (runtime.hpp).
#include <vector>

#include <strata/strata.hpp>

#include "bank/bank.hpp"
#include "common/strata_session.hpp"

namespace strata_bench::bank {

repetition prepare_strata(distribution d, unsigned threads) {
  const workload& w = workload_of(d);
  auto rt = make_strata_runtime(threads);
  auto accounts = std::make_shared<std::vector<strata::resource>>();
  accounts->reserve(k_accounts);
  for (std::size_t i = 0; i < k_accounts; ++i) {
    accounts->push_back(rt->make_resource());
  }
  auto balance = std::make_shared<std::vector<std::int64_t>>(k_accounts);
  return [&w, rt, accounts, balance] {
    std::int64_t* b = balance->data();
    reset(b);
    strata::runtime& r = *rt;
    const strata::resource* acc = accounts->data();
    r.submit([&r, &w, acc, b] {
       for (const transfer& t : w.transfers) {
         r.spawn_with_access({strata::write(acc[t.from]), strata::write(acc[t.to])}, [b, t] { apply(b, t); });
       }
     }).get();
    r.wait_idle();
    return check(w, b);
  };
}

}  // namespace strata_bench::bank
