// first_touch: initialise a buffer with the owner-computes map, so its pages
// land on the nodes of the workers that will use them.
//
//   auto* a = static_cast<double*>(::operator new(n * sizeof(double)));   // not yet touched
//   strata::first_touch(rt, a, n, 0.0);           // worker w writes chunk w: its pages go to w's node
//   strata::parallel_for(rt, 0, n, grain, body, strata::partition::numa_static);   // all local
//
// Linux places an anonymous page on the node of the thread that first writes
// it. partition::numa_static gives worker w of P the chunk
// [n*w/P, n*(w+1)/P) every time, so a buffer initialised here is local to
// every later numa_static loop over the same range and runtime. The huge
// page around each point where two chunks meet is split into base pages
// first (prefer_small_pages), so the pages there also land with their
// owner; only the one base page holding both chunks' ends goes to
// whichever worker writes it first. The memory
// must be untouched (fresh pages from the kernel: a large operator new,
// mmap, or numa_allocate with memory_placement::unbound()); pages already
// written stay where they are.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <span>

#include <strata/numa_alloc/memory.hpp>
#include <strata/runtime/parallel.hpp>
#include <strata/runtime/runtime.hpp>

namespace strata {

// Constructs data[i] = value for i in [0, n), chunk w on worker w.
template <class T>
void first_touch(runtime& rt, T* data, std::size_t n, const T& value = T{}) {
  if (n == 0) return;
  const unsigned p = rt.num_workers();
  const auto huge = static_cast<std::uintptr_t>(huge_page_bytes());
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const auto end = reinterpret_cast<std::uintptr_t>(data + n);
  for (unsigned w = 1; w < p; ++w) {
    const auto cut = reinterpret_cast<std::uintptr_t>(data + n * w / p);
    const std::uintptr_t lo = std::max(cut & ~(huge - 1), begin);
    const std::uintptr_t hi = std::min((cut + huge - 1) & ~(huge - 1), end);
    if (hi > lo) prefer_small_pages(reinterpret_cast<void*>(lo), hi - lo);
  }
  parallel_for(
      rt, 0, n, n,
      [data, &value](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) ::new (static_cast<void*>(data + i)) T(value);
      },
      partition::numa_static);
}

template <class T>
void first_touch(runtime& rt, std::span<T> data, const T& value = T{}) {
  first_touch(rt, data.data(), data.size(), value);
}

}  // namespace strata
