// caf_session: one CAF actor system of P scheduler threads for one
// (benchmark, threads) configuration, created and destroyed outside the
// timed region, with the actors the benchmark spawns and the scoped actor
// the harness thread talks to them through.
//
// CAF 0.17 (Debian libcaf-dev): the default work-stealing scheduler, its
// thread count set by the option "scheduler.max-threads"; nothing else is
// changed (max-throughput stays unlimited, threads are not pinned). CAF also
// starts a clock thread of its own, which the benchmarks here never use
// (no timeouts).
//
// Teardown: an actor system waits in its destructor until every actor has
// terminated, and the benchmarks' actors hold handles to one another (a
// ring, a ping and its pong), so the session sends each actor it spawned an
// exit message first.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

namespace strata_bench {

class caf_session {
 public:
  explicit caf_session(unsigned threads) : m_config(config_for(threads)), m_system(m_config), m_self(m_system) {}
  caf_session(const caf_session&) = delete;
  caf_session& operator=(const caf_session&) = delete;
  ~caf_session() {
    for (const caf::actor& a : m_actors) {
      m_self->send_exit(a, caf::exit_reason::user_shutdown);
    }
  }

  // Spawns fun(self, args...) and keeps the handle for the teardown.
  template <class F, class... Args>
  caf::actor spawn(F fun, Args&&... args) {
    caf::actor a = m_system.spawn(fun, std::forward<Args>(args)...);
    m_actors.push_back(a);
    return a;
  }

  // The harness thread's actor: it sends the start and receives the result.
  caf::scoped_actor& self() noexcept { return m_self; }
  // The same as a handle the benchmark's actors can send to.
  caf::actor self_handle() { return caf::actor_cast<caf::actor>(m_self); }
  std::string render(const caf::error& e) const { return m_system.render(e); }

 private:
  static caf::actor_system_config config_for(unsigned threads) {
    caf::actor_system_config c;
    c.set("scheduler.max-threads", static_cast<caf::config_value::integer>(threads));
    return c;
  }

  caf::actor_system_config m_config;  // the system keeps a reference: declared first, destroyed last
  caf::actor_system m_system;
  caf::scoped_actor m_self;
  std::vector<caf::actor> m_actors;
};

}  // namespace strata_bench
