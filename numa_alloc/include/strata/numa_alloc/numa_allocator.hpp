// numa_allocator<T>: an STL allocator that places its memory.
//
//   strata::numa_allocator<double> a{strata::numa_node{1}};
//   std::vector<double, strata::numa_allocator<double>> v(n, 0.0, a);   // pages on node 1
//   auto local = strata::numa_allocator<double>::local();               // the caller's node
//   auto il = strata::numa_allocator<double>::interleaved();            // all nodes, page by page
//
// The placement travels with the allocator (copies and rebinds keep it);
// two allocators are equal when their placements are, so containers with
// equal allocators may swap and move storage. A node that this machine does
// not have is refused when the allocator is made (numa_error), not later.
#pragma once

#include <cstddef>
#include <limits>
#include <new>

#include <strata/numa_alloc/memory.hpp>

namespace strata {

namespace detail {
// Throws numa_error unless the placement can be served here.
void check_placement(memory_placement where);
}  // namespace detail

template <class T>
class numa_allocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  // Default: the caller's node (local()).
  numa_allocator() noexcept : m_where(memory_placement::local()) {}
  explicit numa_allocator(numa_node n) : m_where(memory_placement::on(n)) { detail::check_placement(m_where); }
  explicit numa_allocator(memory_placement where) : m_where(where) { detail::check_placement(m_where); }
  template <class U>
  numa_allocator(const numa_allocator<U>& other) noexcept : m_where(other.placement()) {}

  static numa_allocator local() noexcept { return numa_allocator(); }
  static numa_allocator interleaved() { return numa_allocator(memory_placement::interleaved()); }

  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(numa_allocate(n * sizeof(T), m_where, alignment()));
  }
  void deallocate(T* p, std::size_t n) noexcept { numa_deallocate(p, n * sizeof(T), alignment()); }

  memory_placement placement() const noexcept { return m_where; }

  template <class U>
  friend bool operator==(const numa_allocator& a, const numa_allocator<U>& b) noexcept {
    return a.placement() == b.placement();
  }

 private:
  static constexpr std::size_t alignment() noexcept {
    return alignof(T) > alignof(std::max_align_t) ? alignof(T) : alignof(std::max_align_t);
  }
  memory_placement m_where;
};

}  // namespace strata
