// Test support: set or unset environment variables for one scope and
// restore the previous values afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata::test {

class env_guard {
 public:
  env_guard() = default;
  env_guard(const env_guard&) = delete;
  env_guard& operator=(const env_guard&) = delete;
  ~env_guard() {
    for (auto it = m_saved.rbegin(); it != m_saved.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }
  env_guard& set(const std::string& name, const std::string& value) {
    save(name);
    ::setenv(name.c_str(), value.c_str(), 1);
    return *this;
  }
  env_guard& unset(const std::string& name) {
    save(name);
    ::unsetenv(name.c_str());
    return *this;
  }

 private:
  void save(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    m_saved.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

// Clears every variable strata reads, so tests start from the defaults.
inline void clear_strata_env(env_guard& g) {
  for (const char* v : {"STRATA_NUM_WORKERS", "STRATA_PLACES", "STRATA_PROC_BIND", "STRATA_TOPOLOGY",
                        "STRATA_DISPLAY_AFFINITY", "STRATA_OVERSUBSCRIBE", "STRATA_DETERMINISTIC_SEED",
                        "SLURM_CPUS_PER_TASK", "HWLOC_XMLFILE", "HWLOC_SYNTHETIC"}) {
    g.unset(v);
  }
}

}  // namespace strata::test
