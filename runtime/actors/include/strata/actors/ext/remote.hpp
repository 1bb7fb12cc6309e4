// Actors on other ranks: the seam between actor.hpp and a transport (the
// MPI bridge implements it; the actors know nothing of MPI).
//
// An actor_ref whose address carries another rank's bits sends through the
// actor system's remote_port: the message is encoded where send<M> or
// ask<M> is instantiated (serialize.hpp), with the id of the pair (actor
// type, message type). The first instantiation of that pair registers,
// during static initialisation, the function that decodes it and delivers
// it on the receiving rank. Every rank of a job runs one binary, so every
// rank holds the same registry (the MPI session compares digests at start).
//
// The receiving side delivers a decoded message as an ordinary local
// message frame (one at a time, FIFO from the transport's one delivering
// thread), carrying a remote_token: the token answers an ask exactly once
// (the value, the exception's text, or a dead letter; a frame destroyed
// unrun answers "dropped") and then tells the transport the item is
// finished, which the termination protocol counts.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include <strata/actors/actor_address.hpp>
#include <strata/mpi/serialize.hpp>

namespace strata::detail {

class actor_system;

// FNV-1a 64: ids of message types and of published actor types; every rank
// of one binary computes the same.
constexpr std::uint64_t fnv1a(std::string_view s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ull;
  }
  return h;
}
// A type's name as people read it ("counter", "ns::msg<int>").
std::string readable_name(const std::type_info& t);
inline std::uint64_t actor_type_id(const std::type_info& t) noexcept { return fnv1a(t.name()); }

// Where the reply of a remote ask goes, on the asking rank.
struct remote_answer {
  virtual ~remote_answer() = default;
  virtual void value(mpi::reader& r) = 0;  // the encoded reply; may throw decode_error
  virtual void fail(std::exception_ptr e) noexcept = 0;
};

enum class answer_status : std::uint8_t { value = 0, threw = 1, dead_letter = 2 };

// The transport's end on the receiving rank.
struct remote_return {
  virtual ~remote_return() = default;
  // The answer to ask `request` from rank `source`: the encoded value, or
  // the text of what went wrong.
  virtual void answer(int source, std::uint64_t request, answer_status s,
                      const std::vector<std::byte>& bytes) noexcept = 0;
  // The message is handled or dropped (after its answer, if any).
  virtual void finished() noexcept = 0;
};

// The transport's end on the sending rank: set on the actor system while a
// session is open (actor_system::remote).
struct remote_port {
  virtual ~remote_port() = default;
  // Sends the n bytes at `bytes`, a message of pair id `type`, to actor `to`
  // on its rank; `answer` is nullptr for a send. Throws usage_error for a
  // rank that does not exist, mpi::remote_error-like errors for one that is
  // gone.
  virtual void post_message(actor_address to, std::uint64_t type, const std::byte* bytes, std::size_t n,
                            std::unique_ptr<remote_answer> answer) = 0;
};

// How one received message is to be delivered: who sent it, which ask it
// is (0: a send), where its answer and completion go.
struct remote_delivery {
  int source = -1;
  std::uint64_t request = 0;
  remote_return* ret = nullptr;
};

// Answers and finishes one received message exactly once (see the top).
class remote_token {
 public:
  explicit remote_token(remote_delivery d) noexcept : m_d(d) {}
  remote_token(remote_token&& o) noexcept : m_d(o.m_d), m_answered(o.m_answered) { o.m_d.ret = nullptr; }
  remote_token(const remote_token&) = delete;
  remote_token& operator=(const remote_token&) = delete;
  remote_token& operator=(remote_token&&) = delete;
  ~remote_token() {
    if (m_d.ret == nullptr) return;
    if (!m_answered && m_d.request != 0) {
      answer(answer_status::dead_letter, "the message was dropped before it was handled (the runtime stopped)");
    }
    m_d.ret->finished();
  }
  bool wants_answer() const noexcept { return m_d.request != 0; }
  void answer(answer_status s, const std::vector<std::byte>& bytes) noexcept {
    if (m_answered || m_d.request == 0) return;
    m_answered = true;
    m_d.ret->answer(m_d.source, m_d.request, s, bytes);
  }
  void answer(answer_status s, std::string_view text) noexcept;

 private:
  remote_delivery m_d;
  bool m_answered = false;
};

using remote_deliver_fn = void (*)(actor_system& sys, actor_address to, mpi::reader& r, remote_delivery how);

struct remote_message_entry {
  std::string name;  // "counter <- increment"
  std::uint64_t id = 0;
  remote_deliver_fn deliver = nullptr;
};

// The process-wide registry of (actor type, message type) pairs (filled by
// static initialisers; entries never move once registered).
std::uint64_t register_remote_message(const std::type_info& actor, const std::type_info& message,
                                      remote_deliver_fn deliver);
const remote_message_entry* find_remote_message(std::uint64_t id) noexcept;
std::vector<std::string> remote_message_names();  // sorted

}  // namespace strata::detail
