// The value types of lock-mode and dataflow tasks: a resource handle, an
// access to it, a priority (resource.hpp has the API that uses them).
#pragma once

#include <cstdint>

namespace strata {

namespace detail {
struct runtime_core;
struct resource_state;
}  // namespace detail

// A handle to one resource of one runtime (copyable). It carries the
// resource's id and runtime, so that a submission validates and orders its
// list without reading the resource's lock word's cache line, which the
// workers running its tasks keep writing. Its generation tells it from the
// handles of a released resource whose state was reused
// (runtime::release_resource).
class resource {
 public:
  resource() = default;
  std::uint32_t id() const noexcept { return m_id; }
  bool valid() const noexcept { return m_state != nullptr; }
  friend bool operator==(const resource& a, const resource& b) noexcept { return a.m_state == b.m_state; }

  // Internal.
  resource(detail::resource_state* s, std::uint32_t id, const detail::runtime_core* owner,
           std::uint32_t generation = 0) noexcept
      : m_state(s), m_owner(owner), m_id(id), m_generation(generation) {}
  detail::resource_state* state() const noexcept { return m_state; }
  const detail::runtime_core* owner() const noexcept { return m_owner; }
  std::uint32_t generation() const noexcept { return m_generation; }

 private:
  detail::resource_state* m_state = nullptr;
  const detail::runtime_core* m_owner = nullptr;
  std::uint32_t m_id = 0;
  std::uint32_t m_generation = 0;  // in what was padding: the handle stays 24 bytes
};

enum class access_mode : std::uint8_t { read, write };

struct access {
  resource res;
  access_mode mode = access_mode::read;
};

inline access read(resource r) noexcept { return {r, access_mode::read}; }
inline access write(resource r) noexcept { return {r, access_mode::write}; }

struct priority {
  int value = 0;  // higher runs first among blocked tasks
};

}  // namespace strata
