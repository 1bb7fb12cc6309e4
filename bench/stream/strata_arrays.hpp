// The STREAM arrays of a strata configuration, placed four ways.
//
// Every placement runs the same triad, strata::parallel_for with
// partition::numa_static, so worker w of P always computes the chunk
// [n*w/P, n*(w+1)/P) of every array; only where the pages of that chunk live
// differs:
//
//   serial-init  untouched pages written by the calling thread (not a
//                worker): all on that thread's node;
//   interleaved  strata::numa_allocator<double>::interleaved(): page by page
//                over the allowed nodes, whoever writes them;
//   first-touch  untouched pages written by strata::first_touch (the same
//                numa_static map): chunk w on worker w's node;
//   per-node     chunk w of each array is its own block,
//                strata::numa_allocate(bytes, memory_placement::on(node of
//                worker w)): bound to that node whoever writes it.
//
// The arrays are addressed per chunk, so the per-node blocks need no
// contiguous range: chunk(a, w) is where element bound(w) of array a lives.
// The placement report (stream/placement_report.cpp) samples the pages of
// these very arrays.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include <strata/strata.hpp>

#include "stream/stream.hpp"

namespace strata_bench::stream {

// The OS index of worker w's NUMA node (worker_place::numa_os_index: the
// number numa_allocate, move_pages and strata::node_of use), -1 when unknown.
int worker_node(const strata::runtime& rt, unsigned w);

class placed_arrays {
 public:
  static constexpr std::size_t k_x = 0, k_y = 1, k_c = 2;  // x and y take turns, c is read only

  // Allocates and initialises the three arrays of n elements for rt's workers.
  placed_arrays(strata::runtime& rt, placement where, std::size_t n);
  placed_arrays(const placed_arrays&) = delete;
  placed_arrays& operator=(const placed_arrays&) = delete;
  ~placed_arrays();

  std::size_t size() const noexcept { return m_n; }
  unsigned workers() const noexcept { return static_cast<unsigned>(m_bounds.size() - 1); }
  // Worker w's chunk is [bound(w), bound(w + 1)).
  std::size_t bound(unsigned w) const noexcept { return m_bounds[w]; }
  // The first element of worker w's chunk of array a (null for an empty chunk).
  double* chunk(std::size_t a, unsigned w) const noexcept { return m_chunk[a][w]; }
  std::size_t passes() const noexcept { return m_passes; }

  // `count` triads (a timed run: k_passes), a numa_static loop each; call
  // from a task of rt.
  void run_passes(strata::runtime& rt, unsigned count = k_passes);
  // The sampled check of the array written last, with the GB moved by one run.
  verdict finish_run() const;

 private:
  unsigned chunk_of(std::size_t i) const noexcept;
  double& at(std::size_t a, std::size_t i) const noexcept;
  // Calls f(w, offset, count) for the pieces of [lo, hi) in each chunk w.
  template <class F>
  void for_each_piece(std::size_t lo, std::size_t hi, const F& f) const;
  // Writes the initial values of elements [lo, hi).
  void fill(std::size_t lo, std::size_t hi) const noexcept;

  std::size_t m_n;
  std::vector<std::size_t> m_bounds;                // P + 1 chunk bounds
  std::array<std::vector<double*>, 3> m_chunk;      // [array][worker]
  std::vector<std::shared_ptr<void>> m_blocks;      // owns the memory (frees it when destroyed)
  std::size_t m_passes = 0;                         // triads done, warm-up included
};

}  // namespace strata_bench::stream
