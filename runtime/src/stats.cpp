// runtime_stats::to_json(): the one format benches and jobs consume.
#include <strata/runtime/stats.hpp>
#include <strata/topology/ext/json_writer.hpp>

namespace strata {

std::uint64_t runtime_stats::total_executed() const noexcept {
  std::uint64_t n = 0;
  for (const auto& w : workers) n += w.tasks_executed;
  return n;
}

std::uint64_t runtime_stats::total_stolen() const noexcept {
  std::uint64_t n = 0;
  for (const auto& w : workers) n += w.tasks_stolen;
  return n;
}

std::string runtime_stats::to_json() const {
  json_writer j;
  j.begin_object();
  j.key("external_submits"); j.value(static_cast<unsigned long long>(external_submits));
  j.key("total_executed"); j.value(static_cast<unsigned long long>(total_executed()));
  j.key("total_stolen"); j.value(static_cast<unsigned long long>(total_stolen()));
  j.key("workers");
  j.begin_array();
  for (const auto& w : workers) {
    j.begin_object();
    j.key("worker"); j.value(w.worker);
    j.key("pu"); j.value(w.pu);
    j.key("numa_node"); j.value(w.numa_node);
    j.key("pinned"); j.value(w.pinned);
    j.key("tasks_executed"); j.value(static_cast<unsigned long long>(w.tasks_executed));
    j.key("tasks_spawned"); j.value(static_cast<unsigned long long>(w.tasks_spawned));
    j.key("tasks_stolen"); j.value(static_cast<unsigned long long>(w.tasks_stolen));
    j.key("steals_by_tier");
    j.begin_array();
    for (std::size_t k = 0; k < w.steals_by_tier.size(); ++k) {
      j.begin_object();
      j.key("tier"); j.value(static_cast<unsigned long>(k));
      j.key("kind"); j.value(w.tier_kinds[k]);
      j.key("steals"); j.value(static_cast<unsigned long long>(w.steals_by_tier[k]));
      j.end_object();
    }
    j.end_array();
    j.key("steal_attempts"); j.value(static_cast<unsigned long long>(w.steal_attempts));
    j.key("steal_failures"); j.value(static_cast<unsigned long long>(w.steal_failures));
    j.key("injector_tasks"); j.value(static_cast<unsigned long long>(w.injector_tasks));
    j.key("inbox_tasks"); j.value(static_cast<unsigned long long>(w.inbox_tasks));
    j.key("inbox_depth"); j.value(static_cast<unsigned long long>(w.inbox_depth));
    j.key("deque_high_water"); j.value(static_cast<unsigned long long>(w.deque_high_water));
    j.key("publishes"); j.value(static_cast<unsigned long long>(w.publishes));
    j.key("parks"); j.value(static_cast<unsigned long long>(w.parks));
    j.key("wakeups"); j.value(static_cast<unsigned long long>(w.wakeups));
    j.key("boxed_tasks"); j.value(static_cast<unsigned long long>(w.boxed_tasks));
    j.key("detached_exceptions"); j.value(static_cast<unsigned long long>(w.detached_exceptions));
    j.key("actors"); j.value(static_cast<unsigned long long>(w.actors));
    j.key("messages_local"); j.value(static_cast<unsigned long long>(w.messages_local));
    j.key("messages_remote"); j.value(static_cast<unsigned long long>(w.messages_remote));
    j.key("mailbox_high_water"); j.value(static_cast<unsigned long long>(w.mailbox_high_water));
    j.key("dead_letters"); j.value(static_cast<unsigned long long>(w.dead_letters));
    j.key("actor_failures"); j.value(static_cast<unsigned long long>(w.actor_failures));
    j.key("migrations_proposed"); j.value(static_cast<unsigned long long>(w.migrations_proposed));
    j.key("migrations_done"); j.value(static_cast<unsigned long long>(w.migrations_done));
    j.key("busy_s"); j.value(w.busy_s);
    j.key("idle_s"); j.value(w.idle_s);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.str();
}

}  // namespace strata
