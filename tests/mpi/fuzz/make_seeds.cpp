// Writes the seed corpus of decoder_fuzz (one good buffer of each kind) to
// the folder named on the command line. Built and run by tools/fuzz.sh.
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include <strata/mpi/serialize.hpp>

#include "wire.hpp"

using namespace strata::mpi;
using namespace strata::mpi::detail;

namespace {
void save(const std::string& path, const std::vector<std::byte>& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return;
  std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string dir = argv[1];
  std::vector<std::byte> args;
  writer w(args);
  const std::uint64_t id = 0x1234, request = 7;
  w.value(id);
  w.value(request);
  w.value(std::make_tuple(5, std::string("halo"), std::vector<double>{1.0, 2.0}));
  std::vector<std::byte> reply(9);
  reply[0] = std::byte{7};
  writer rw(reply);
  rw.value(std::vector<std::uint8_t>{1, 2, 3});
  for (bool crc : {false, true}) {
    buffer_builder b(4096);
    b.append(handler::task, args.data(), args.size());
    b.append(handler::reply, reply.data(), reply.size());
    b.append(handler::large_notice, nullptr, 0);
    save(dir + "/mixed" + (crc ? "_crc" : ""), b.seal(1, 0, 3, crc, false));
    buffer_builder e(64);
    save(dir + "/heartbeat" + (crc ? "_crc" : ""), e.seal(1, 2, 9, crc, false));
    buffer_builder g(64);
    g.append(handler::goodbye, nullptr, 0);
    save(dir + "/goodbye" + (crc ? "_crc" : ""), g.seal(1, 1, 4, crc, false));
    buffer_builder l(4096);
    l.append(handler::task, args.data(), args.size());
    save(dir + "/large" + (crc ? "_crc" : ""), l.seal(1, 0, 5, crc, true));
  }
  return 0;
}
