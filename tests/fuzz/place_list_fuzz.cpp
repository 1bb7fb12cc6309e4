// libFuzzer target: place lists (STRATA_PLACES, config.places), parsed and
// then placed on a synthetic machine of 2 packages x 2 NUMA nodes x 4 cores x
// 2 PUs. parse_places returns a spec or throws config_error; a spec either
// places workers on PUs the machine has or is refused with config_error.
// Run by tools/fuzz/run.sh place_list.
#include <cstddef>
#include <cstdint>
#include <string>

#include <strata/topology/error.hpp>
#include <strata/topology/ext/place_list.hpp>
#include <strata/topology/placement.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const strata::topology machine = strata::topology::synthetic("pack:2 numa:2 core:4 pu:2");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)strata::parse_places(text, "STRATA_PLACES");
    strata::placement_config c;
    c.places = text;
    c.topology = machine;
    c.oversubscribe = true;
    c.workers = 1 + (size % 24);
    const strata::placement_plan plan = strata::placement_plan::compute(c);
    for (const auto& w : plan.workers()) {
      if (w.pu_os_index < 0 || w.pu_os_index >= 32) __builtin_trap();  // a PU the machine lacks
    }
  } catch (const strata::config_error&) {
  }
  return 0;
}
