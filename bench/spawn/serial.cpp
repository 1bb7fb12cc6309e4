// spawn, serial baseline and the shared parts: the "tasks" as plain calls.
#include <cstring>
#include <memory>
#include <sstream>

#include "common/env_size.hpp"
#include "spawn/spawn.hpp"

namespace strata_bench::spawn {
namespace {

[[gnu::noinline]] void task(std::uint8_t* hit, std::size_t i) { mark(hit, i); }

}  // namespace

std::size_t tasks() { return size_from_env(k_n_variable, k_default_n, 1, k_max_n); }

std::string params() { return "tasks=" + size_param(k_n_variable, k_default_n, 1, k_max_n); }

verdict check(const std::vector<std::uint8_t>& hit) {
  for (std::size_t i = 0; i < hit.size(); ++i) {
    if (hit[i] != 1) {
      std::ostringstream s;
      s << "task " << i << " ran " << static_cast<int>(hit[i]) << " times";
      return {false, s.str()};
    }
  }
  return {true, {}, static_cast<double>(hit.size()) * 1e-6};
}

repetition prepare_serial(unsigned /*threads*/) {
  auto hit = std::make_shared<std::vector<std::uint8_t>>(tasks());
  return [hit] {
    std::memset(hit->data(), 0, hit->size());
    const std::size_t n = opaque(hit->size());
    for (std::size_t i = 0; i < n; ++i) task(hit->data(), i);
    return check(*hit);
  };
}

}  // namespace strata_bench::spawn
