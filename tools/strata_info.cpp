// strata-info: the machine report. Prints the topology tree, the NUMA
// distance matrix, the placement table, each worker's steal tiers and what
// limited the CPUs; --json prints the same as one JSON object. Honours every
// STRATA_* variable; a bad value exits 2 with a message naming it.
#include <strata/strata.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

namespace {

int usage(std::FILE* to, int code) {
  std::fprintf(to,
               "usage: strata-info [--json] [--help]\n"
               "  Reports the machine strata sees and where its workers go.\n"
               "  Honours STRATA_NUM_WORKERS, STRATA_PLACES, STRATA_PROC_BIND, STRATA_TOPOLOGY,\n"
               "  STRATA_OVERSUBSCRIBE, SLURM_CPUS_PER_TASK, HWLOC_XMLFILE, HWLOC_SYNTHETIC.\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      return usage(stdout, 0);
    } else {
      std::fprintf(stderr, "strata-info: unknown argument '%s'\n", argv[i]);
      return usage(stderr, 2);
    }
  }
  try {
    const strata::placement_plan plan = strata::placement_plan::compute(strata::config::from_env());
    const std::string out = json ? plan.to_json() + "\n" : plan.describe();
    std::fputs(out.c_str(), stdout);
    return 0;
  } catch (const strata::config_error& e) {
    std::fprintf(stderr, "strata-info: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata-info: internal error: %s\n", e.what());
    return 3;
  }
}
