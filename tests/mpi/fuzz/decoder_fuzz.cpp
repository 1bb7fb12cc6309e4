// libFuzzer target for the bridge's decoder: any bytes, as if MPI delivered
// them from rank 1. check_buffer must accept or reject without reading past
// the input; for accepted buffers every item's payload goes through the
// readers the handlers use (function id and request, reply status, the
// argument decoders of serialize.hpp), which may throw decode_error and
// nothing else. Built and run by tools/fuzz.sh (clang -fsanitize=fuzzer,
// address, undefined).
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <strata/mpi/serialize.hpp>

#include "wire.hpp"

using namespace strata::mpi;
using namespace strata::mpi::detail;

namespace {

template <class T>
void decode_as(const std::byte* p, std::size_t n) {
  try {
    reader r(p, n);
    (void)r.value<T>();
  } catch (const decode_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* p = reinterpret_cast<const std::byte*>(data);
  for (bool crc : {false, true}) {
    const checked c = check_buffer(p, size, 1, crc);
    if (!c.ok) continue;
    for_each_item(p, c.header, [](handler h, const std::byte* q, std::size_t n) {
      switch (h) {
        case handler::task:
          if (n >= 16) {
            decode_as<std::tuple<int, std::string, std::vector<double>>>(q + 16, n - 16);
            decode_as<std::tuple<std::vector<std::string>, std::optional<int>>>(q + 16, n - 16);
          }
          break;
        case handler::reply:
          if (n >= 9) {
            decode_as<std::vector<std::uint8_t>>(q + 9, n - 9);
            decode_as<std::pair<std::string, std::vector<bool>>>(q + 9, n - 9);
          }
          break;
        default:
          break;
      }
    });
  }
  return 0;
}
