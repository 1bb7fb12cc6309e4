// libFuzzer target: the topology loader. An input whose first byte is even
// is an hwloc synthetic description (topology::synthetic), else an XML file
// (its bytes written to a file, topology::from_xml). Either a machine with
// at least one PU, core and NUMA node, or config_error. Run by
// tools/fuzz/run.sh topology.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <strata/topology/error.hpp>
#include <strata/topology/topology.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    strata::topology t = [&] {
      if (data[0] % 2 == 0) return strata::topology::synthetic(std::string(body.substr(0, body.find('\0'))));
      std::FILE* f = std::fopen("input.xml", "wb");
      if (f == nullptr) __builtin_trap();
      std::fwrite(body.data(), 1, body.size(), f);
      std::fclose(f);
      return strata::topology::from_xml("input.xml");
    }();
    if (t.num_pus() == 0 || t.num_cores() == 0 || t.num_numa_nodes() == 0) __builtin_trap();
  } catch (const strata::config_error&) {
  }
  return 0;
}
