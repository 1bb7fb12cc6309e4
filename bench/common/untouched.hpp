// untouched_array: doubles in fresh pages that nobody has written yet.
//
// Linux puts an anonymous page on the NUMA node of the thread that first
// writes it. The memory-bound benchmarks (stream, jacobi) want that first
// write to be theirs: the calling thread (serial init) or each runtime's own
// parallel loop (first touch). An allocator may hand back memory that is
// already touched (a heap block reused, a cached chunk); a private anonymous
// mapping never is, whatever the size, so these come straight from mmap and
// go back with munmap.
//
// Page size: strata's allocator asks for transparent huge pages on its large
// mappings (madvise MADV_HUGEPAGE), so these do too, and the versions and
// placements differ in where the pages are, not in their size (with THP
// "madvise", only advised mappings get 2 MiB pages; with "never", none).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <utility>

namespace strata_bench {

class untouched_array {
 public:
  untouched_array() = default;
  // n > 0 doubles, zero pages until written; throws std::bad_alloc.
  explicit untouched_array(std::size_t n) : m_bytes(n * sizeof(double)) {
    void* p = mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      throw std::bad_alloc();
    }
    madvise(p, m_bytes, MADV_HUGEPAGE);  // advice only: THP may be off
    m_data = static_cast<double*>(p);
  }
  untouched_array(untouched_array&& other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  untouched_array& operator=(untouched_array&& other) noexcept {
    std::swap(m_data, other.m_data);
    std::swap(m_bytes, other.m_bytes);
    return *this;
  }
  untouched_array(const untouched_array&) = delete;
  untouched_array& operator=(const untouched_array&) = delete;
  ~untouched_array() {
    if (m_data != nullptr) {
      munmap(m_data, m_bytes);
    }
  }

  double* data() const noexcept { return m_data; }

 private:
  double* m_data = nullptr;
  std::size_t m_bytes = 0;
};

}  // namespace strata_bench
