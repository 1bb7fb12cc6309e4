// stream, serial baseline: the calling thread writes the untouched arrays
// (so on a NUMA machine all their pages sit on its node) and runs the triad
// passes. Also the size and params shared by every version.
#include <bit>
#include <memory>
#include <stdexcept>

#include "common/env_size.hpp"
#include "stream/stream.hpp"

namespace strata_bench::stream {

std::size_t array_size() { return size_from_env(k_n_variable, k_default_n, 1, k_max_n); }

std::string params() {
  std::size_t n = 0;
  try {
    n = array_size();
  } catch (const std::invalid_argument&) {
    return std::string("n=? (") + k_n_variable + ")";
  }
  if (std::has_single_bit(n) && n >= 1024) {
    return "n=2^" + std::to_string(std::countr_zero(n));
  }
  return "n=" + std::to_string(n);
}

repetition prepare_serial(unsigned /*threads*/) {
  auto s = std::make_shared<plain_arrays>(array_size());
  s->init(0, s->n);
  return [s] {
    const std::size_t n = opaque(s->n);
    for (unsigned k = 0; k < k_passes; ++k) {
      const unsigned to = written_by(++s->passes);
      triad(s->xy[to].data(), s->xy[1 - to].data(), s->c.data(), n);
    }
    return s->finish_run();
  };
}

}  // namespace strata_bench::stream
