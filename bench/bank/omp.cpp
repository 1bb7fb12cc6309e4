// bank on OpenMP: `parallel` + `single`, the single thread creating one
// `task` per transfer (the producer is one thread of the team, as a main
// thread that submits); a transfer locks the std::mutex of each of its two
// accounts, the lower account number first, then applies.
#include <omp.h>

#include <memory>
#include <mutex>
#include <vector>

#include "bank/bank.hpp"

namespace strata_bench::bank {
namespace {

struct alignas(64) account_lock {
  std::mutex m;
};

}  // namespace

repetition prepare_omp_tasks(distribution d, unsigned threads) {
  const workload& w = workload_of(d);
  const int p = static_cast<int>(threads);
  omp_set_num_threads(p);
  auto locks = std::make_shared<std::vector<account_lock>>(k_accounts);
  auto balance = std::make_shared<std::vector<std::int64_t>>(k_accounts);
  return [&w, p, locks, balance] {
    std::int64_t* b = balance->data();
    reset(b);
    account_lock* l = locks->data();
    const transfer* list = w.transfers.data();
    const std::size_t n = opaque(w.transfers.size());
#pragma omp parallel num_threads(p)
#pragma omp single
    for (std::size_t i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
      {
        const transfer& t = list[i];
        const std::uint32_t lo = t.from < t.to ? t.from : t.to;
        const std::uint32_t hi = t.from < t.to ? t.to : t.from;
        std::scoped_lock first(l[lo].m);
        std::scoped_lock second(l[hi].m);
        apply(b, t);
      }
    }
    return check(w, b);
  };
}

}  // namespace strata_bench::bank
