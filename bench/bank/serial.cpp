// bank, serial baseline and the shared parts: the transfer lists (uniform and
// Zipf), their serial results, the check.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <utility>

#include "bank/bank.hpp"
#include "common/env_size.hpp"

namespace strata_bench::bank {
namespace {

std::size_t transfer_count() { return size_from_env(k_n_variable, k_default_n, 1, k_max_n); }

// A double in [0, 1) from the top 53 bits (uniform_real_distribution's
// algorithm is left to the library).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Draws accounts by Zipf(s): P(k) proportional to 1 / (k + 1)^s.
class zipf_draw {
 public:
  zipf_draw() : m_cdf(k_accounts) {
    double sum = 0.0;
    for (std::size_t k = 0; k < k_accounts; ++k) {
      sum += 1.0 / std::pow(static_cast<double>(k + 1), k_zipf_s);
      m_cdf[k] = sum;
    }
    for (double& c : m_cdf) {
      c /= sum;
    }
  }
  std::uint32_t operator()(std::mt19937_64& rng) const {
    const double u = unit(rng);
    const auto it = std::upper_bound(m_cdf.begin(), m_cdf.end(), u);
    const auto k = static_cast<std::size_t>(it - m_cdf.begin());
    return static_cast<std::uint32_t>(std::min(k, k_accounts - 1));
  }

 private:
  std::vector<double> m_cdf;
};

workload build(distribution d, std::size_t n) {
  workload w;
  w.transfers.reserve(n);
  std::mt19937_64 rng(d == distribution::uniform ? 20240601 : 20240602);
  const zipf_draw zipf;
  auto draw = [&]() -> std::uint32_t {
    if (d == distribution::uniform) {
      return static_cast<std::uint32_t>(rng() % k_accounts);
    }
    return zipf(rng);
  };
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t from = draw();
    std::uint32_t to = draw();
    while (to == from) {
      to = draw();
    }
    w.transfers.push_back({from, to, static_cast<std::int64_t>(1 + rng() % 100)});
  }
  w.expected.assign(k_accounts, 0);
  reset(w.expected.data());
  for (const transfer& t : w.transfers) {
    apply(w.expected.data(), t);
  }
  return w;
}

}  // namespace

const workload& workload_of(distribution d) {
  static std::mutex m;
  static std::map<std::pair<distribution, std::size_t>, std::unique_ptr<workload>> made;
  const std::size_t n = transfer_count();
  std::lock_guard lock(m);
  auto& slot = made[{d, n}];
  if (!slot) {
    slot = std::make_unique<workload>(build(d, n));
  }
  return *slot;
}

std::string params() {
  return "accounts=" + std::to_string(k_accounts) +
         " transfers=" + size_param(k_n_variable, k_default_n, 1, k_max_n);
}

verdict check(const workload& w, const std::int64_t* balance) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < k_accounts; ++i) {
    total += balance[i];
  }
  const std::int64_t want_total = k_initial_balance * static_cast<std::int64_t>(k_accounts);
  if (total != want_total) {
    return expect_equal("total", total, want_total);
  }
  for (std::size_t i = 0; i < k_accounts; ++i) {
    if (balance[i] != w.expected[i]) {
      std::ostringstream s;
      s << "balance[" << i << "] = " << balance[i] << ", expected " << w.expected[i];
      return {false, s.str()};
    }
  }
  return {true, {}, static_cast<double>(w.transfers.size()) * 1e-6};
}

repetition prepare_serial(distribution d, unsigned /*threads*/) {
  const workload& w = workload_of(d);
  auto balance = std::make_shared<std::vector<std::int64_t>>(k_accounts);
  return [&w, balance] {
    std::int64_t* b = balance->data();
    reset(b);
    const std::size_t n = opaque(w.transfers.size());
    const transfer* list = w.transfers.data();
    for (std::size_t t = 0; t < n; ++t) {
      apply(b, list[t]);
    }
    return check(w, b);
  };
}

}  // namespace strata_bench::bank
