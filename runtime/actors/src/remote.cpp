// Actors on other ranks, the actors' side (design in ext/remote.hpp): the
// registry of (actor type, message type) pairs, and the errors of a send
// that cannot go.
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
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

void remote_batch::add(actor_address to, remote_deliver_fn deliver, std::uint64_t request, const std::byte* p,
                       std::size_t n) {
  const head h{to.bits(), deliver, request, n};
  const auto* hp = reinterpret_cast<const std::byte*>(&h);
  // Room first: a record is added whole or not at all (the destructor
  // reads the records back). Doubling from 256 bytes (a lone message, an
  // ask waited for, takes no 16 KiB), stopping once at k_bytes.
  const std::size_t need = m_bytes.size() + sizeof h + n;
  const std::size_t cap = m_bytes.capacity();
  if (need > cap) {
    std::size_t grown = cap == 0 ? 256 : 2 * cap;
    if (cap < k_bytes) grown = std::min(grown, k_bytes);
    m_bytes.reserve(std::max(need, grown));
  }
  m_bytes.insert(m_bytes.end(), hp, hp + sizeof h);
  m_bytes.insert(m_bytes.end(), p, p + n);
  ++m_count;
}

void remote_batch::deliver_all(actor_system& sys) noexcept {
  while (m_next < m_bytes.size()) {
    head h;
    std::memcpy(&h, m_bytes.data() + m_next, sizeof h);
    mpi::reader r(m_bytes.data() + m_next + sizeof h, h.bytes);
    m_next += sizeof h + h.bytes;  // first: from here on the message is its token's to finish
    try {
      h.deliver(sys, actor_address::from_bits(h.to), r, remote_delivery{m_source, h.request, m_ret}, true);
    } catch (const mpi::decode_error&) {
      m_ret->malformed();
    } catch (...) {
      // Memory ran out or the runtime refused a frame: the token answered
      // and finished the message; the next ones still go.
    }
  }
}

remote_batch::~remote_batch() {
  while (m_next < m_bytes.size()) {  // never delivered: each one finished (an ask answered "dropped")
    head h;
    std::memcpy(&h, m_bytes.data() + m_next, sizeof h);
    m_next += sizeof h + h.bytes;
    remote_token dropped(remote_delivery{m_source, h.request, m_ret});
  }
}

namespace {
struct batch_frame {
  remote_batch batch;
  actor_system* sys;
  void operator()() { batch.deliver_all(*sys); }
};
}  // namespace

void deliver_batch(actor_system& sys, unsigned worker, remote_batch&& b) {
  // A frame destroyed unsent (make_message or the submission threw)
  // destroys the batch, which finishes its messages.
  task* t = make_message(sys, actor_address{}, batch_frame{std::move(b), &sys});
  t->kind = k_batch_frame;
  t->sink = static_cast<std::uint8_t>(sys.sink);
  submit_to_worker(sys.core, worker, t);
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
