// child_slots: one result slot per spawned child, summed after the join.
//
// The parallel tree benchmarks (UTS, nqueens, skynet) never count through a
// shared atomic: every child task writes its subtree's count into its own
// slot of the parent's frame, and the parent adds the slots after the join
// (task_group::wait / taskwait), which orders the writes before the reads.
// Up to k_inline children live on the parent's stack; more (the 2000
// children of the UTS T3 root) go to the heap.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace strata_bench {

class child_slots {
 public:
  explicit child_slots(std::size_t n) : m_size(n) {
    if (n > k_inline) {
      m_heap = std::make_unique<std::uint64_t[]>(n);  // value-initialised: zeros
      m_data = m_heap.get();
    }
  }
  child_slots(const child_slots&) = delete;
  child_slots& operator=(const child_slots&) = delete;

  std::uint64_t* data() noexcept { return m_data; }
  std::uint64_t& operator[](std::size_t i) noexcept { return m_data[i]; }

  std::uint64_t sum() const noexcept {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < m_size; ++i) {
      s += m_data[i];
    }
    return s;
  }

 private:
  static constexpr std::size_t k_inline = 16;
  std::size_t m_size;
  std::array<std::uint64_t, k_inline> m_inline{};
  std::unique_ptr<std::uint64_t[]> m_heap;
  std::uint64_t* m_data = m_inline.data();
};

}  // namespace strata_bench
