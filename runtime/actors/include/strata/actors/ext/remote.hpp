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
//
// A transport that receives messages in bulk hands them over in a
// remote_batch per destination worker: one inbox item instead of one per
// message (an atomic exchange, a wake-up check and an inbox pop each). The
// worker's actor source takes the batch in inbox order, as it takes a
// message (task::kind says which), and decodes its messages there, each
// into a frame from that worker's pool and straight into its mailbox: the
// order of arrival is kept, and a message of a batch is exactly as a
// message that came alone.
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
  // A message of a batch did not decode (it was answered and finished):
  // the transport counts it.
  virtual void malformed() noexcept = 0;
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

// Decodes one message and delivers it (deliver_remote in actor.hpp);
// in_batch: called by remote_batch::deliver_all on the actor's worker.
using remote_deliver_fn = void (*)(actor_system& sys, actor_address to, mpi::reader& r, remote_delivery how,
                                   bool in_batch);

struct remote_message_entry {
  std::string name;  // "counter <- increment"
  std::uint64_t id = 0;
  remote_deliver_fn deliver = nullptr;
};

// Received messages for the actors of one worker, in arrival order (see the
// top). Built by the transport's thread, then moved into one frame by
// deliver_batch. A message counts as the transport's from add() on: it is
// finished by its token once delivered and run, or by ~remote_batch if the
// batch never reached the worker (its ask answered "dropped").
class remote_batch {
 public:
  remote_batch(int source, remote_return* ret) noexcept : m_source(source), m_ret(ret) {}
  remote_batch(remote_batch&& o) noexcept
      : m_bytes(std::move(o.m_bytes)), m_next(o.m_next), m_count(o.m_count), m_source(o.m_source), m_ret(o.m_ret) {
    o.m_bytes.clear();
    o.m_next = 0;
    o.m_count = 0;
  }
  remote_batch(const remote_batch&) = delete;
  remote_batch& operator=(const remote_batch&) = delete;
  remote_batch& operator=(remote_batch&&) = delete;
  ~remote_batch();

  // A batch holds up to k_bytes: a size malloc serves from its heap, not
  // by a fresh mapping whose pages fault in and whose unmapping interrupts
  // every core (a batch is freed on another thread than the one that made
  // it). A message of more than k_copy_max bytes is better delivered alone
  // than copied into a batch.
  static constexpr std::size_t k_bytes = 16 * 1024;
  static constexpr std::size_t k_copy_max = 1024;
  // Whether a message of n bytes fits beside what the batch holds (an
  // empty batch takes any message).
  bool fits(std::size_t n) const noexcept { return m_count == 0 || m_bytes.size() + sizeof(head) + n <= k_bytes; }
  // Appends a message for actor `to` (an address of this rank): its n
  // encoded bytes, copied, and the function that decodes and delivers it.
  void add(actor_address to, remote_deliver_fn deliver, std::uint64_t request, const std::byte* p, std::size_t n);
  std::size_t size() const noexcept { return m_count; }
  // On the actors' worker: decodes and delivers each message not delivered
  // yet, in order. A message that does not decode is answered, finished
  // and reported to the transport (malformed); the rest still go.
  void deliver_all(actor_system& sys) noexcept;

 private:
  // A record: this head, then `bytes` bytes of the message.
  struct head {
    std::uint64_t to;
    remote_deliver_fn deliver;
    std::uint64_t request;
    std::uint64_t bytes;
  };
  std::vector<std::byte> m_bytes;
  std::size_t m_next = 0;   // offset of the first record not delivered
  std::size_t m_count = 0;  // records added
  int m_source;
  remote_return* m_ret;
};

// Sends batch b to the inbox of worker `worker` (the worker of all its
// messages' actors) as one frame. Throws what submitting throws (a runtime
// that is shutting down); the batch's messages are finished then.
void deliver_batch(actor_system& sys, unsigned worker, remote_batch&& b);

// The process-wide registry of (actor type, message type) pairs (filled by
// static initialisers; entries never move once registered).
std::uint64_t register_remote_message(const std::type_info& actor, const std::type_info& message,
                                      remote_deliver_fn deliver);
const remote_message_entry* find_remote_message(std::uint64_t id) noexcept;
std::vector<std::string> remote_message_names();  // sorted

}  // namespace strata::detail
