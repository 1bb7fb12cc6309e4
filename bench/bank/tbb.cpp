// bank on oneTBB: parallel_for over the transfer list (auto partitioner); a
// transfer locks the std::mutex of each of its two accounts, the lower
// account number first (one global order, so no deadlock), then applies.
#include <mutex>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "bank/bank.hpp"
#include "common/tbb_session.hpp"

namespace strata_bench::bank {
namespace {

// One lock per account, each on its own cache line.
struct alignas(64) account_lock {
  std::mutex m;
};

}  // namespace

repetition prepare_tbb(distribution d, unsigned threads) {
  const workload& w = workload_of(d);
  auto session = std::make_shared<tbb_session>(threads);
  auto locks = std::make_shared<std::vector<account_lock>>(k_accounts);
  auto balance = std::make_shared<std::vector<std::int64_t>>(k_accounts);
  return [&w, session, locks, balance] {
    std::int64_t* b = balance->data();
    reset(b);
    account_lock* l = locks->data();
    const transfer* list = w.transfers.data();
    session->run([&w, l, list, b] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, w.transfers.size()),
                        [l, list, b](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t i = range.begin(); i != range.end(); ++i) {
                            const transfer& t = list[i];
                            const std::uint32_t lo = t.from < t.to ? t.from : t.to;
                            const std::uint32_t hi = t.from < t.to ? t.to : t.from;
                            std::scoped_lock first(l[lo].m);
                            std::scoped_lock second(l[hi].m);
                            apply(b, t);
                          }
                        });
    });
    return check(w, b);
  };
}

}  // namespace strata_bench::bank
