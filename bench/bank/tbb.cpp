// bank on oneTBB, two ways. A transfer locks the std::mutex of each of its
// two accounts, the lower account number first (one global order, so no
// deadlock), then applies.
//   - tasks (issue 6's peer, "oneTBB tasks with one std::mutex per
//     account"): one task_group::run per transfer from one loop, then wait(),
//     the same shape as strata's one lock-mode task per transfer;
//   - parallel_for: a loop over the list (auto partitioner), no task per
//     transfer: the bound a runtime without per-transfer tasks reaches.
#include <mutex>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include "bank/bank.hpp"
#include "common/tbb_session.hpp"

namespace strata_bench::bank {
namespace {

// One lock per account, each on its own cache line.
struct alignas(64) account_lock {
  std::mutex m;
};

void locked_apply(account_lock* l, std::int64_t* b, const transfer& t) {
  const std::uint32_t lo = t.from < t.to ? t.from : t.to;
  const std::uint32_t hi = t.from < t.to ? t.to : t.from;
  std::scoped_lock first(l[lo].m);
  std::scoped_lock second(l[hi].m);
  apply(b, t);
}

// One configuration: a oneTBB session, the account locks and balances;
// each repetition resets the balances and runs all(workload, locks, balances) inside
// the session's arena.
template <class All>
repetition prepare_with(distribution d, unsigned threads, All all) {
  const workload& w = workload_of(d);
  auto session = std::make_shared<tbb_session>(threads);
  auto locks = std::make_shared<std::vector<account_lock>>(k_accounts);
  auto balance = std::make_shared<std::vector<std::int64_t>>(k_accounts);
  return [&w, session, locks, balance, all] {
    std::int64_t* b = balance->data();
    reset(b);
    account_lock* l = locks->data();
    session->run([&w, l, b, &all] { all(w, l, b); });
    return check(w, b);
  };
}

}  // namespace

repetition prepare_tbb_tasks(distribution d, unsigned threads) {
  return prepare_with(d, threads, [](const workload& w, account_lock* l, std::int64_t* b) {
    tbb::task_group g;
    for (const transfer& t : w.transfers) {
      g.run([l, b, t] { locked_apply(l, b, t); });
    }
    g.wait();
  });
}

repetition prepare_tbb(distribution d, unsigned threads) {
  return prepare_with(d, threads, [](const workload& w, account_lock* l, std::int64_t* b) {
    const transfer* list = w.transfers.data();
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.transfers.size()),
                      [l, list, b](const tbb::blocked_range<std::size_t>& range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i) locked_apply(l, b, list[i]);
                      });
  });
}

}  // namespace strata_bench::bank
