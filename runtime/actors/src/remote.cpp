// Actors on other ranks, the actors' side (design in ext/remote.hpp): the
// registry of (actor type, message type) pairs, and the errors of a send
// that cannot go.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <strata/actors/actor.hpp>
#include <strata/actors/ext/remote.hpp>
#include <strata/runtime/error.hpp>

namespace strata::detail {
namespace {

struct message_registry {
  std::mutex m;
  // unique_ptr: entries never move once registered (find returns pointers).
  std::unordered_map<std::uint64_t, std::unique_ptr<remote_message_entry>> by_id;
};

message_registry& registry() {
  static message_registry r;  // first use during static initialisation
  return r;
}

}  // namespace

std::string readable_name(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && d != nullptr ? std::string(d.get()) : std::string(t.name());
}

std::uint64_t register_remote_message(const std::type_info& actor, const std::type_info& message,
                                      remote_deliver_fn deliver) {
  // The mangled names: one binary, so every rank computes the same id.
  const std::uint64_t id = fnv1a(std::string(actor.name()) + '\n' + message.name());
  message_registry& r = registry();
  std::lock_guard lock(r.m);
  auto& e = r.by_id[id];
  if (e == nullptr) {
    e = std::make_unique<remote_message_entry>();
    e->name = readable_name(actor) + " <- " + readable_name(message);
    e->id = id;
    e->deliver = deliver;
  }
  return id;
}

const remote_message_entry* find_remote_message(std::uint64_t id) noexcept {
  message_registry& r = registry();
  std::lock_guard lock(r.m);
  auto it = r.by_id.find(id);
  return it == r.by_id.end() ? nullptr : it->second.get();
}

std::vector<std::string> remote_message_names() {
  message_registry& r = registry();
  std::lock_guard lock(r.m);
  std::vector<std::string> names;
  names.reserve(r.by_id.size());
  for (const auto& [id, e] : r.by_id) names.push_back(e->name);
  std::sort(names.begin(), names.end());
  return names;
}

void remote_token::answer(answer_status s, std::string_view text) noexcept {
  if (m_answered || m_d.request == 0) return;
  try {
    const auto* p = reinterpret_cast<const std::byte*>(text.data());
    answer(s, std::vector<std::byte>(p, p + text.size()));
  } catch (...) {  // no memory for the text: an empty one still answers
    answer(s, std::vector<std::byte>{});
  }
}

std::string dead_letter_text(actor_address to) {
  return "strata: the ask reached no actor (dead letter): " + to.to_string() + " is gone";
}

remote_port& port_for(actor_system& sys, actor_address to) {
  // acquire: pairs with the session's release store of its port.
  remote_port* p = sys.remote.load(std::memory_order_acquire);
  if (p == nullptr) {
    throw usage_error("strata: " + to.to_string() + " is on rank " + std::to_string(to.rank()) + ", and this rank (" +
                      std::to_string(sys.rank) + ") has no strata::mpi::session open");
  }
  return *p;
}

void throw_not_serializable(const std::type_info& type, actor_address to) {
  throw usage_error("strata: " + readable_name(type) + " cannot cross ranks (to " + to.to_string() +
                    "): use trivially copyable types, std::string, std::vector, or specialise "
                    "strata::mpi::serialize (see <strata/mpi/serialize.hpp>)");
}

}  // namespace strata::detail
