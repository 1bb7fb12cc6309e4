// stream on strata: the four placements of stream/strata_arrays.hpp, each
// a record of its own. The passes run inside rt.submit(...).get(), so every
// numa_static loop starts on a worker, as in the other strata benchmarks.
#include <algorithm>
#include <stdexcept>
#include <string>

#include <strata/numa_alloc/memory.hpp>
#include <strata/numa_alloc/numa_allocator.hpp>
#include <strata/runtime/first_touch.hpp>

#include "common/strata_session.hpp"
#include "common/untouched.hpp"
#include "stream/strata_arrays.hpp"

namespace strata_bench::stream {

int worker_node(const strata::runtime& rt, unsigned w) { return rt.placement().at(w).numa_os_index; }

placed_arrays::placed_arrays(strata::runtime& rt, placement where, std::size_t n)
    : m_n(n), m_bounds(rt.num_workers() + 1) {
  const unsigned p = rt.num_workers();
  for (unsigned w = 0; w <= p; ++w) {
    m_bounds[w] = n * w / p;  // numa_static's map
  }
  for (std::vector<double*>& chunks : m_chunk) {
    chunks.assign(p, nullptr);
  }

  // One block per array; chunk w starts at element bound(w).
  auto contiguous = [&](std::size_t a, double* base) {
    for (unsigned w = 0; w < p; ++w) {
      m_chunk[a][w] = base + m_bounds[w];
    }
  };
  auto fill_by_workers = [&] {
    strata::parallel_for(
        rt, std::size_t{0}, m_n, m_n, [this](std::size_t lo, std::size_t hi) { fill(lo, hi); },
        strata::partition::numa_static);
  };

  switch (where) {
    case placement::serial_init:
      for (std::size_t a = 0; a < 3; ++a) {
        auto block = std::make_shared<untouched_array>(n);
        contiguous(a, block->data());
        m_blocks.push_back(std::move(block));
      }
      fill(0, m_n);  // the calling thread touches every page
      break;
    case placement::interleaved:
      for (std::size_t a = 0; a < 3; ++a) {
        auto alloc = strata::numa_allocator<double>::interleaved();
        double* base = alloc.allocate(n);
        m_blocks.emplace_back(base, [alloc, n](void* q) mutable { alloc.deallocate(static_cast<double*>(q), n); });
        contiguous(a, base);
      }
      fill_by_workers();
      break;
    case placement::first_touch:
      for (std::size_t a = 0; a < 3; ++a) {
        auto block = std::make_shared<untouched_array>(n);
        strata::first_touch(rt, block->data(), n, 0.0);  // places the pages
        contiguous(a, block->data());
        m_blocks.push_back(std::move(block));
      }
      fill_by_workers();  // the values, on pages already placed
      break;
    case placement::per_node:
      for (unsigned w = 0; w < p; ++w) {
        const std::size_t bytes = (m_bounds[w + 1] - m_bounds[w]) * sizeof(double);
        if (bytes == 0) {
          continue;
        }
        const int node = worker_node(rt, w);
        if (node < 0) {
          throw std::runtime_error("per-node placement: worker " + std::to_string(w) + " has no NUMA node");
        }
        for (std::size_t a = 0; a < 3; ++a) {
          void* block = strata::numa_allocate(bytes, strata::memory_placement::on(strata::numa_node{node}));
          m_blocks.emplace_back(block, [bytes](void* q) { strata::numa_deallocate(q, bytes); });
          m_chunk[a][w] = static_cast<double*>(block);
        }
      }
      fill_by_workers();
      break;
  }
}

placed_arrays::~placed_arrays() = default;

unsigned placed_arrays::chunk_of(std::size_t i) const noexcept {
  // The last chunk starting at or before i: the one holding it (empty chunks
  // start where the next one does and are passed over).
  const auto after = std::upper_bound(m_bounds.begin(), m_bounds.end() - 1, i);
  return static_cast<unsigned>(after - m_bounds.begin() - 1);
}

double& placed_arrays::at(std::size_t a, std::size_t i) const noexcept {
  const unsigned w = chunk_of(i);
  return m_chunk[a][w][i - m_bounds[w]];
}

template <class F>
void placed_arrays::for_each_piece(std::size_t lo, std::size_t hi, const F& f) const {
  while (lo < hi) {
    const unsigned w = chunk_of(lo);
    const std::size_t end = std::min(hi, m_bounds[w + 1]);
    f(w, lo - m_bounds[w], end - lo);
    lo = end;
  }
}

void placed_arrays::fill(std::size_t lo, std::size_t hi) const noexcept {
  for_each_piece(lo, hi, [this](unsigned w, std::size_t off, std::size_t count) {
    double* x = m_chunk[k_x][w] + off;
    double* y = m_chunk[k_y][w] + off;
    double* c = m_chunk[k_c][w] + off;
    const std::size_t first = m_bounds[w] + off;
    for (std::size_t j = 0; j < count; ++j) {
      x[j] = initial(first + j);
      y[j] = 0.0;
      c[j] = c_value(first + j);
    }
  });
}

void placed_arrays::run_passes(strata::runtime& rt, unsigned count) {
  for (unsigned k = 0; k < count; ++k) {
    const std::size_t to = written_by(++m_passes);
    const std::size_t from = 1 - to;
    strata::parallel_for(
        rt, std::size_t{0}, m_n, m_n,
        [this, to, from](std::size_t lo, std::size_t hi) {
          // numa_static hands worker w exactly its chunk: one piece.
          for_each_piece(lo, hi, [this, to, from](unsigned w, std::size_t off, std::size_t len) {
            triad(m_chunk[to][w] + off, m_chunk[from][w] + off, m_chunk[k_c][w] + off, len);
          });
        },
        strata::partition::numa_static);
  }
}

verdict placed_arrays::finish_run() const {
  const std::size_t result = written_by(m_passes);
  verdict v = check(m_n, m_passes, [this, result](std::size_t i) { return at(result, i); });
  v.work = gigabytes_per_run(m_n);  // for a timed run, k_passes passes
  return v;
}

repetition prepare_strata(placement where, unsigned threads) {
  auto rt = make_strata_runtime(threads);
  auto arrays = std::make_shared<placed_arrays>(*rt, where, array_size());
  return [rt, arrays] {
    strata::runtime& r = *rt;
    placed_arrays& a = *arrays;
    rt->submit([&r, &a] { a.run_passes(r); }).get();
    return a.finish_run();
  };
}

}  // namespace strata_bench::stream
