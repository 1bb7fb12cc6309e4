// dataflow_graph: dependence tracking and task launch (design in dataflow.hpp).
#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include <strata/access/dataflow.hpp>
#include <strata/runtime/runtime.hpp>

namespace strata {

dataflow_graph::dataflow_graph(runtime& rt) : m_rt(rt) {}

dataflow_graph::~dataflow_graph() {
  try {
    wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: a dataflow_graph destroyed without wait() had a failing task: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "strata: a dataflow_graph destroyed without wait() had a failing task\n");
  }
}

void dataflow_graph::add_edge(node* from, node* to) {
  if (from == nullptr || from == to) return;
  std::lock_guard lock(from->mutex);
  if (from->done) return;  // finished already: nothing to wait for
  from->succ.push_back(to);
  to->pending.fetch_add(1, std::memory_order_relaxed);  // relaxed: `to` cannot start before its guard drops
}

void dataflow_graph::task(const std::vector<dependence>& deps, std::function<void()> fn) {
  if (!fn) throw usage_error("strata::dataflow_graph::task: empty function");
  for (std::size_t i = 0; i < deps.size(); ++i) {
    const auto* s = deps[i].res.state();
    if (s == nullptr) throw usage_error("strata::dataflow_graph::task: dependence " + std::to_string(i) + " names an empty resource");
    if (s->owner != &m_rt.core()) {
      throw usage_error("strata::dataflow_graph::task: resource " + std::to_string(s->id) + " belongs to another runtime");
    }
    if (s->generation.load(std::memory_order_relaxed) != deps[i].res.generation()) {
      throw usage_error("strata::dataflow_graph::task: resource " + std::to_string(s->id) +
                        " was released (runtime::release_resource); this handle is stale");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (deps[j].res == deps[i].res) {
        throw usage_error("strata::dataflow_graph::task: resource " + std::to_string(s->id) +
                          " appears twice; accepted: each resource once (inout covers in and out)");
      }
    }
  }
  node& n = m_nodes.emplace_back();
  n.graph = this;
  n.fn = std::move(fn);
  for (const dependence& d : deps) {
    track& t = m_track[d.res.state()];
    switch (d.mode) {
      case dep_mode::in:
        add_edge(t.last_writer, &n);
        for (node* g : t.group) add_edge(g, &n);
        t.readers.push_back(&n);
        break;
      case dep_mode::out:
      case dep_mode::inout:
        add_edge(t.last_writer, &n);
        for (node* r : t.readers) add_edge(r, &n);
        for (node* g : t.group) add_edge(g, &n);
        t.last_writer = &n;
        t.readers.clear();
        t.group.clear();
        t.group_preds.clear();
        break;
      case dep_mode::mutexinoutset:
        if (t.group.empty() || !t.readers.empty()) {  // a new group starts here
          t.group_preds.clear();
          if (t.last_writer != nullptr) t.group_preds.push_back(t.last_writer);
          t.group_preds.insert(t.group_preds.end(), t.readers.begin(), t.readers.end());
          t.group_preds.insert(t.group_preds.end(), t.group.begin(), t.group.end());
          t.last_writer = nullptr;
          t.readers.clear();
          t.group.clear();
        }
        for (node* p : t.group_preds) add_edge(p, &n);
        t.group.push_back(&n);
        n.locks.push_back(write(d.res));
        break;
    }
  }
  ++m_submitted;
  // Drop the submission guard: starts it now if nothing is ahead of it.
  if (n.pending.fetch_sub(1, std::memory_order_acq_rel) == 1) launch(&n);  // acq_rel: pairs with finish()
}

void dataflow_graph::launch(node* n) {
  auto body = [n] {
    try {
      n->fn();
    } catch (...) {
      std::lock_guard lock(n->graph->m_error_mutex);
      if (!n->graph->m_error) n->graph->m_error = std::current_exception();
    }
    n->graph->finish(n);
  };
  if (n->locks.empty()) {
    m_rt.spawn(std::move(body));
  } else {
    m_rt.submit_with_access(n->locks, std::move(body));
  }
}

void dataflow_graph::finish(node* n) noexcept {
  // relaxed: ordered before the waiter's read of it by the seq_cst increment
  // of m_finished below, which the waiter acquires.
  m_finishing.fetch_add(1, std::memory_order_relaxed);
  std::vector<node*> succ;
  {
    std::lock_guard lock(n->mutex);
    n->done = true;
    succ.swap(n->succ);
  }
  for (node* s : succ) {
    // acq_rel: our writes happen-before the successor runs (pairs with the other decrements).
    if (s->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      try {
        launch(s);
      } catch (...) {
        finish(s);  // the runtime refused it (shutting down): count it so wait() returns
      }
    }
  }
  // seq_cst (also release: wait's acquire sees the task's effects): the
  // increment, then the read of the target, against the waiter's store of
  // the target, then its read of m_finished: one of the two sees the other.
  const std::uint64_t finished = m_finished.fetch_add(1, std::memory_order_seq_cst) + 1;
  // Only the task that completes what a sleeper waits for wakes it; the
  // others cost no fence and no system call.
  if (finished >= m_wait_target.load(std::memory_order_seq_cst)) {
    m_wake.fetch_add(1, std::memory_order_release);  // release: pairs with the waiter's acquire load
    detail::futex_wake(m_wake, 1 << 30);
  }
  // The last access to the graph: wait() returns (and the graph may be
  // destroyed) only after this (release: pairs with the acquire in wait).
  m_finishing.fetch_sub(1, std::memory_order_release);
}

void dataflow_graph::wait() {
  const std::uint64_t target = m_submitted;
  auto done = [this, target] { return m_finished.load(std::memory_order_acquire) >= target; };  // acquire: see finish
  if (!done()) {
    detail::worker* w = detail::current_worker();
    if (w != nullptr && w->rt == &m_rt.core()) {
      detail::help_until(
          *w,
          [](const void* g) {
            auto* self = static_cast<const dataflow_graph*>(g);
            return self->m_finished.load(std::memory_order_acquire) >= self->m_submitted;  // acquire: see finish
          },
          this);
    } else {
      // engine::external with no worker hosted: the caller runs the workers.
      detail::runtime_core& core = m_rt.core();
      while (core.external_engine && !done()) {
        if (!detail::drive_inline(core)) break;
      }
      m_wait_target.store(target, std::memory_order_seq_cst);  // seq_cst: see finish
      for (;;) {
        const std::uint32_t e = m_wake.load(std::memory_order_acquire);  // acquire: pairs with the bump
        if (m_finished.load(std::memory_order_seq_cst) >= target) break;  // seq_cst: see finish
        detail::futex_wait(m_wake, e, 100'000'000);
      }
      m_wait_target.store(k_nobody, std::memory_order_relaxed);  // relaxed: the graph is quiescent
    }
  }
  // Finishers that counted the last tasks may still be on their way out of
  // finish(): they touch the graph until they leave (the caller may destroy
  // the graph right after wait()).
  while (m_finishing.load(std::memory_order_acquire) != 0) std::this_thread::yield();  // acquire: see finish
  m_track.clear();
  m_nodes.clear();
  m_submitted = 0;
  m_finished.store(0, std::memory_order_relaxed);  // relaxed: quiescent
  std::exception_ptr e;
  {
    std::lock_guard lock(m_error_mutex);
    e = std::exchange(m_error, nullptr);
  }
  if (e) std::rethrow_exception(e);
}

}  // namespace strata
