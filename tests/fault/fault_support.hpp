// Test support for fault injection: a scoped plan on one site, and the
// process's threads and descriptors, which a failure must not leave behind.
#pragma once

#include <cstdint>
#include <filesystem>

#include <strata/topology/ext/fault.hpp>

namespace strata::test {

// Arms `s` for the scope; disarmed on leaving it, whatever happened.
class armed_fault {
 public:
  armed_fault(fault::site s, int error, std::uint64_t skip = 0, std::uint64_t times = 1)
      : m_site(s), m_before(fault::injected(s)) {
    fault::arm(s, error, skip, times);
  }
  armed_fault(const armed_fault&) = delete;
  armed_fault& operator=(const armed_fault&) = delete;
  ~armed_fault() { fault::disarm(m_site); }
  // Failures injected at the site since this plan was armed.
  std::uint64_t injected() const { return fault::injected(m_site) - m_before; }

 private:
  fault::site m_site;
  std::uint64_t m_before;
};

inline std::size_t count_entries(const char* dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}
inline std::size_t threads_now() { return count_entries("/proc/self/task"); }
inline std::size_t fds_now() { return count_entries("/proc/self/fd"); }

}  // namespace strata::test
