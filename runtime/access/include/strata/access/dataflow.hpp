// dataflow_graph: tasks ordered by what they read and write, with the
// semantics of OpenMP's `depend` clauses: the result equals running the
// tasks one by one in submission order.
//
//   strata::dataflow_graph g{rt};
//   g.task({strata::in(a), strata::out(b)}, [&] { b_val = f(a_val); });
//   g.task({strata::inout(b)}, [&] { b_val += 1; });
//   g.wait();                    // rethrows the first exception of a task
//
// Per resource the graph remembers the last writer, the readers since, and
// the current mutexinoutset group. in waits for the last writer (or the
// whole group); out and inout wait for all of those; mutexinoutset members
// wait for what came before the group but not for each other: they run in
// any order, one at a time, under the resource's write lock (lock mode).
// Edges to tasks that already finished are skipped; a task starts when its
// last predecessor finishes (an atomic count per task, a mutex per task for
// its successor list). Submit from one thread at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <strata/access/resource.hpp>

namespace strata {

class runtime;

enum class dep_mode : std::uint8_t { in, out, inout, mutexinoutset };

struct dependence {
  resource res;
  dep_mode mode = dep_mode::in;
};

inline dependence in(resource r) noexcept { return {r, dep_mode::in}; }
inline dependence out(resource r) noexcept { return {r, dep_mode::out}; }
inline dependence inout(resource r) noexcept { return {r, dep_mode::inout}; }
inline dependence mutexinoutset(resource r) noexcept { return {r, dep_mode::mutexinoutset}; }

class dataflow_graph {
 public:
  explicit dataflow_graph(runtime& rt);
  dataflow_graph(const dataflow_graph&) = delete;
  dataflow_graph& operator=(const dataflow_graph&) = delete;
  ~dataflow_graph();  // waits (an exception nobody collected is reported on stderr)

  void task(std::initializer_list<dependence> deps, std::function<void()> fn) {
    task(std::vector<dependence>(deps), std::move(fn));
  }
  void task(const std::vector<dependence>& deps, std::function<void()> fn);
  // Waits for every task so far; rethrows the first exception. The graph
  // can then be used again (dependencies start afresh).
  void wait();

  struct node;  // internal

 private:
  struct track {
    node* last_writer = nullptr;
    std::vector<node*> readers;    // since the last writer / group
    std::vector<node*> group;      // current mutexinoutset group
    std::vector<node*> group_preds;  // what every member of the group waits for
  };
  void launch(node* n);
  void finish(node* n) noexcept;
  static void add_edge(node* from, node* to);

  runtime& m_rt;
  std::deque<node> m_nodes;
  std::unordered_map<const detail::resource_state*, track> m_track;
  std::uint64_t m_submitted = 0;
  std::atomic<std::uint64_t> m_finished{0};  // RMW by finishing tasks, read by wait
  // A thread outside the workers sleeping in wait(): the count it waits
  // for (k_nobody when none) and its futex word. Only the task that brings
  // m_finished to that count wakes it (seq_cst on both sides: see finish).
  static constexpr std::uint64_t k_nobody = ~std::uint64_t{0};
  std::atomic<std::uint64_t> m_wait_target{k_nobody};
  std::atomic<std::uint32_t> m_wake{0};
  // finish() calls still running (RMW by finishers; wait() waits for 0).
  std::atomic<std::uint32_t> m_finishing{0};
  std::mutex m_error_mutex;                  // guards m_error
  std::exception_ptr m_error;
};

struct dataflow_graph::node {
  dataflow_graph* graph = nullptr;
  std::function<void()> fn;
  std::vector<access> locks;              // write locks of its mutexinoutset resources
  std::atomic<std::int64_t> pending{1};   // predecessors left + 1 while being submitted
  std::mutex mutex;                       // guards done and succ
  bool done = false;
  std::vector<node*> succ;
};

}  // namespace strata
