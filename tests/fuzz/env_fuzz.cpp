// libFuzzer target: every STRATA_* variable read by config::from_env().
// The first byte of an input picks the variable, the rest (up to a NUL) is
// its value. from_env() must return a configuration or throw config_error
// (whose message names the variable); anything else (another exception, a
// crash, a sanitizer report, a hang) is a finding. A value it accepts must
// also survive validate() or be refused there with config_error: never a
// silent default. Run by tools/fuzz/run.sh env.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <strata/runtime/config.hpp>
#include <strata/runtime/error.hpp>
#include <strata/topology/error.hpp>

namespace {

constexpr const char* k_variables[] = {
    "STRATA_NUM_WORKERS",      "STRATA_PLACES",       "STRATA_PROC_BIND",    "STRATA_TOPOLOGY",
    "STRATA_DISPLAY_AFFINITY", "STRATA_OVERSUBSCRIBE", "STRATA_DETERMINISTIC_SEED", "STRATA_POLICY",
    "STRATA_HYBRID_BOUND",     "STRATA_PERF_COUNTERS", "STRATA_TRACE_EVENTS", "STRATA_IO_POLL_US",
    "STRATA_TRACE"};
constexpr std::size_t k_count = sizeof k_variables / sizeof k_variables[0];

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const char* name = k_variables[data[0] % k_count];
  std::string value(reinterpret_cast<const char*>(data + 1), size - 1);
  value = value.substr(0, value.find('\0'));
  for (const char* v : k_variables) unsetenv(v);
  setenv(name, value.c_str(), 1);
  try {
    const strata::config c = strata::config::from_env();
    c.validate();
  } catch (const strata::config_error& e) {
    if (std::string(e.what()).find(name) == std::string::npos && std::string(name) != "STRATA_TRACE") {
      __builtin_trap();  // an error that does not name the variable
    }
  }
  unsetenv(name);
  return 0;
}
