// tbb_session: oneTBB limited to P threads for one (benchmark, threads)
// configuration.
//
// Two limits, because either alone leaks: global_control caps the whole
// process at P threads (so nested or stray parallelism cannot grow the pool),
// and a task_arena of P slots (one reserved for the calling thread) is where
// the benchmark body runs, so it gets exactly P threads. Nothing is pinned;
// oneTBB does not pin by default.
//
// The stack size is raised for worker threads created from now on: UTS T3
// recurses 1,572 levels deep (T3L: 17,844), each level a task_group frame.
#pragma once

#include <cstddef>
#include <utility>

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

namespace strata_bench {

class tbb_session {
 public:
  explicit tbb_session(unsigned threads)
      : m_parallelism(tbb::global_control::max_allowed_parallelism, threads),
        m_stack(tbb::global_control::thread_stack_size, k_stack_bytes),
        m_arena(static_cast<int>(threads)) {
    m_arena.initialize();
  }

  // Runs f on the calling thread inside the arena and returns its result.
  template <class F>
  auto run(F&& f) {
    return m_arena.execute(std::forward<F>(f));
  }

 private:
  static constexpr std::size_t k_stack_bytes = std::size_t{64} << 20;
  tbb::global_control m_parallelism;
  tbb::global_control m_stack;
  tbb::task_arena m_arena;
};

}  // namespace strata_bench
