// A user program against the installed strata: placement from the environment.
#include <strata/strata.hpp>

#include <cstdio>

int main() {
  try {
    const auto plan = strata::placement_plan::compute(strata::config::from_env());
    std::printf("workers=%zu numa_nodes=%zu tier0_of_worker0=", plan.num_workers(), plan.machine().num_numa_nodes());
    const auto& tiers = plan.tiers_of(0);
    for (std::size_t i = 0; !tiers.empty() && i < tiers[0].workers.size(); ++i) {
      std::printf("%s%u", i ? "," : "", tiers[0].workers[i]);
    }
    std::printf("\n");
    return 0;
  } catch (const strata::config_error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
