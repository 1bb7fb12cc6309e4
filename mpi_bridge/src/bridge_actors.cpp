// Remote actors, the bridge's side (the protocol is at the top of
// bridge.hpp; the actors' side in strata/actors/ext/remote.hpp).
//
// An actor_message item is {u64 address, u64 message type, u64 request,
// message bytes}. The pass that dispatches a buffer gathers its actor
// messages in a remote_batch per destination worker, and hands the batches
// to those workers' inboxes when the buffer is done; each worker decodes its
// batch's messages into ordinary message frames, straight into their
// mailboxes (strata/actors/ext/remote.hpp). So FIFO per (sender thread,
// actor) holds across ranks as it does locally: the sender's posts are
// ordered in its lane, buffers are dispatched in sequence order, one pass
// at a time, the inbox is FIFO per producer, and a batch keeps its order.
// A batch per buffer, not a frame per message: per message, a frame
// through the inbox cost an atomic exchange, a wake-up check and a pop.
#include <strata/actors/ext/remote.hpp>

#include <chrono>
#include <cstring>
#include <thread>

#include "bridge.hpp"
#include "bridge_util.hpp"

namespace strata::mpi::detail {

namespace {

namespace sd = strata::detail;

// The asking side's sink of an actor's reply.
struct actor_reply final : reply_sink {
  actor_reply(std::unique_ptr<sd::remote_answer> a, std::string who) : answer(std::move(a)), context(std::move(who)) {}
  void value(reader& r) override { answer->value(r); }
  void error(std::string what) override {
    answer->fail(std::make_exception_ptr(remote_error("strata::mpi: " + context + " threw: " + what)));
  }
  void dead_letter(std::string what) override {
    answer->fail(std::make_exception_ptr(dead_letter_error(what + " (" + context + ")")));
  }
  std::unique_ptr<sd::remote_answer> answer;
  std::string context;
};

// find_remote_message(id) through a one-entry cache per thread (the
// registry's lookup takes its mutex; entries never move).
const sd::remote_message_entry* cached_message(std::uint64_t id) noexcept {
  thread_local std::uint64_t last_id = 0;
  thread_local const sd::remote_message_entry* last = nullptr;
  if (id == last_id && last != nullptr) return last;
  const sd::remote_message_entry* e = sd::find_remote_message(id);
  last_id = id;
  last = e;
  return e;
}

void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
  const auto at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

void put_text(std::vector<std::byte>& out, std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  out.insert(out.end(), p, p + s.size());
}

}  // namespace

void bridge::attach_actors() {
  sd::actor_system& sys = sd::actors_of(m_rt.core());
  if (m_rank != 0 && sys.spawned.load(std::memory_order_relaxed) && sys.rank != static_cast<unsigned>(m_rank)) {
    throw usage_error("strata::mpi::session: actors were spawned before the session on rank " +
                      std::to_string(m_rank) + "; their addresses would carry rank 0: create the session first");
  }
  if (static_cast<unsigned>(m_size) > (1u << actor_address::k_rank_bits)) {
    throw usage_error("strata::mpi::session: " + std::to_string(m_size) + " ranks; actor addresses hold " +
                      std::to_string(1u << actor_address::k_rank_bits));
  }
  sys.rank = static_cast<unsigned>(m_rank);
  if (sys.remote.load(std::memory_order_relaxed) != nullptr) {
    throw usage_error("strata::mpi::session: this runtime already has an open session");
  }
  m_actors = &sys;
  sys.remote.store(this, std::memory_order_release);  // pairs with port_for's acquire
}

void bridge::detach_actors() noexcept {
  sd::actor_system& sys = sd::actors_of(m_rt.core());
  sd::remote_port* self = this;
  sys.remote.compare_exchange_strong(self, nullptr, std::memory_order_release);  // pairs with port_for's acquire
}

void bridge::forget_reply(std::uint64_t request) noexcept {
  std::lock_guard lock(m_replies_m);
  m_replies.erase(request);
  m_awaited.store(m_replies.size(), std::memory_order_relaxed);
}

void bridge::post_message(actor_address to, std::uint64_t type, const std::byte* bytes, std::size_t n,
                          std::unique_ptr<sd::remote_answer> answer) {
  const int dest = static_cast<int>(to.rank());
  if (dest >= m_size) {
    throw usage_error("strata::mpi: " + to.to_string() + " names rank " + std::to_string(dest) + " (ranks 0.." +
                      std::to_string(m_size - 1) + ")");
  }
  std::uint64_t request = 0;
  if (answer != nullptr) {
    const sd::remote_message_entry* e = sd::find_remote_message(type);
    std::string who = (e != nullptr ? e->name : std::string("a message")) + " at " + to.to_string();
    request = expect_reply(dest, std::make_unique<actor_reply>(std::move(answer), std::move(who)));
  }
  std::uint64_t head[3] = {to.bits(), type, request};
  try {
    post(dest, handler::actor_message, reinterpret_cast<const std::byte*>(head), sizeof head, bytes, n);
  } catch (...) {
    if (request != 0) forget_reply(request);  // the caller gets the exception, not a future
    throw;
  }
}

void bridge::dispatch_actor(int source, const std::byte* p, std::size_t n) {
  if (n < 24) {
    count_reject(reject::bad_payload);
    return;
  }
  const actor_address to = actor_address::from_bits(read_u64(p));
  const std::uint64_t type = read_u64(p + 8), request = read_u64(p + 16);
  sd::remote_delivery how{source, request, this};
  const sd::remote_message_entry* e = cached_message(type);
  if (e == nullptr || to.rank() != static_cast<unsigned>(m_rank)) {
    // Corrupt or misdirected (one binary per job: the registries matched at
    // start). Counted; an ask still gets its answer, and the item is done.
    count_reject(reject::bad_payload);
    m_tasks_live.fetch_add(1, std::memory_order_relaxed);
    sd::remote_token t(how);
    t.answer(sd::answer_status::threw, std::string_view(e == nullptr ? "strata::mpi: unknown actor message type"
                                                                      : "strata::mpi: an address of another rank"));
    return;
  }
  // Finished (tasks_live and m_done) by the token, when its frame has run.
  m_tasks_live.fetch_add(1, std::memory_order_relaxed);
  m_actor_messages.fetch_add(1, std::memory_order_relaxed);
  try {
    reader r(p + 24, n - 24);
    e->deliver(sd::actors_of(m_rt.core()), to, r, how, false);
  } catch (const decode_error&) {
    count_reject(reject::bad_payload);  // the token answered the ask and finished the item
  } catch (...) {
    // The runtime refused the frame (it is shutting down) or memory ran out:
    // the token answered and finished, and service goes on.
  }
}

// Adds actor_message item (p, n) to the batch of its actor's worker; false
// for one that takes dispatch_actor's way: a malformed head, an unknown
// type, another rank's address, a worker this rank does not have (answered
// and counted there), no memory for the batch, or a message above
// remote_batch::k_copy_max (a batch would copy it once more; the batches
// before it go first, so it overtakes none of them).
bool bridge::batch_actor(int source, const std::byte* p, std::size_t n, actor_batches& to) {
  if (n < 24 || m_actors == nullptr) return false;
  const actor_address a = actor_address::from_bits(read_u64(p));
  const sd::remote_message_entry* e = cached_message(read_u64(p + 8));
  if (e == nullptr || a.rank() != static_cast<unsigned>(m_rank) || m_actors->home_of(a) == nullptr) return false;
  std::vector<sd::remote_batch>& b = to.batches;
  if (n - 24 > sd::remote_batch::k_copy_max) {
    hand_over(b);
    return false;
  }
  try {
    if (b.empty()) {
      const std::size_t workers = m_rt.num_workers();
      b.reserve(workers);
      for (std::size_t w = 0; w < workers; ++w) b.emplace_back(source, this);
    }
    sd::remote_batch& mine = b[a.worker()];
    if (!mine.fits(n - 24)) send_batch(mine, a.worker());  // full: it goes, and a fresh one follows it
    mine.add(a, e->deliver, read_u64(p + 16), p + 24, n - 24);
  } catch (const std::bad_alloc&) {
    hand_over(b);
    return false;
  }
  return true;
}

// Counts batch b's messages live (each finished by its token: after it ran,
// or when a refused batch is destroyed) and sends it to worker w; b is
// empty after.
void bridge::send_batch(sd::remote_batch& b, std::size_t w) noexcept {
  const std::size_t n = b.size();
  if (n == 0) return;
  // relaxed: the add is sequenced before the batch's submission, which the
  // inbox publishes (release push, acquire pop) to the worker whose tokens
  // subtract (finished's release, paired with ~bridge's acquire load).
  m_tasks_live.fetch_add(n, std::memory_order_relaxed);
  m_actor_messages.fetch_add(n, std::memory_order_relaxed);  // relaxed: a counter (stats)
  try {
    sd::deliver_batch(*m_actors, static_cast<unsigned>(w), std::move(b));
  } catch (...) {
    // The runtime is shutting down or memory ran out: the batch's messages
    // were finished (asks answered "dropped").
  }
}

void bridge::hand_over(std::vector<sd::remote_batch>& batches) noexcept {
  for (std::size_t w = 0; w < batches.size(); ++w) send_batch(batches[w], w);
  batches.clear();
}

void bridge::malformed() noexcept { count_reject(reject::bad_payload); }

void bridge::answer(int source, std::uint64_t request, sd::answer_status s,
                    const std::vector<std::byte>& bytes) noexcept {
  try {
    // The 9 bytes of the reply's head, then the answer as it is (no copy
    // to join them: for a large answer a fresh buffer costs page faults).
    std::byte head[9];
    std::memcpy(head, &request, sizeof request);
    head[8] = static_cast<std::byte>(s);
    try {
      post(source, handler::reply, head, sizeof head, bytes.data(), bytes.size());
    } catch (const usage_error& ex) {  // a reply above max_message_bytes
      std::vector<std::byte> reply(head, head + sizeof head);
      reply[8] = static_cast<std::byte>(sd::answer_status::threw);
      put_text(reply, std::string("the reply could not be sent: ") + ex.what());
      post(source, handler::reply, reply.data(), reply.size());
    }
  } catch (...) {
    // The asker is gone (it said goodbye) or memory ran out: nothing to
    // answer to; its own session fails its futures.
  }
}

void bridge::finished() noexcept {
  m_done.fetch_add(1);  // seq_cst: after the frame's answer and its posts (quiescence.hpp)
  // release: the frame's last touch of the bridge (pairs with ~bridge's acquire load).
  m_tasks_live.fetch_sub(1, std::memory_order_release);
}

// ---- names ---------------------------------------------------------------------

void bridge::publish(actor_address a, std::uint64_t type, const std::string& type_name, std::string_view name) {
  if (name.empty() || name.size() > 1024) {
    throw usage_error("strata::mpi::publish: a name of " + std::to_string(name.size()) +
                      " bytes; accepted: 1 .. 1024 bytes");
  }
  if (!a.valid() || a.rank() != static_cast<unsigned>(m_rank)) {
    throw usage_error("strata::mpi::publish(\"" + std::string(name) + "\"): " + a.to_string() +
                      " is not an actor of this rank (" + std::to_string(m_rank) + ")");
  }
  std::lock_guard lock(m_dir_m);
  auto [it, fresh] = m_dir.try_emplace(std::string(name), published{a.bits(), type, type_name});
  if (!fresh && it->second.address != a.bits()) {
    throw usage_error("strata::mpi::publish: rank " + std::to_string(m_rank) + " already published \"" +
                      std::string(name) + "\" as " + actor_address::from_bits(it->second.address).to_string());
  }
}

std::vector<std::byte> bridge::directory_entry(std::string_view name) const {
  std::vector<std::byte> out;
  std::lock_guard lock(m_dir_m);
  auto it = m_dir.find(name);
  if (it != m_dir.end()) {
    put_u64(out, it->second.address);
    put_u64(out, it->second.type);
    put_text(out, it->second.type_name);
    return out;
  }
  put_u64(out, 0);
  put_u64(out, 0);
  std::string names;
  for (const auto& [n, p] : m_dir) names += (names.empty() ? "\"" : ", \"") + n + "\"";
  put_text(out, names.empty() ? std::string("nothing") : names);
  return out;
}

void bridge::dispatch_lookup(int source, const std::byte* p, std::size_t n) {
  if (n < 8) {
    count_reject(reject::bad_payload);
    return;
  }
  const std::uint64_t request = read_u64(p);
  std::vector<std::byte> reply;
  put_u64(reply, request);
  reply.push_back(std::byte{0});
  const std::vector<std::byte> entry = directory_entry(std::string_view(reinterpret_cast<const char*>(p + 8), n - 8));
  reply.insert(reply.end(), entry.begin(), entry.end());
  try {
    post(source, handler::reply, reply.data(), reply.size());
  } catch (...) {  // the asker said goodbye
  }
  m_done.fetch_add(1);  // seq_cst: after the reply's post (quiescence.hpp)
}

}  // namespace strata::mpi::detail

namespace strata::mpi {

namespace {

// A lookup's answer: address bits (0: not published), type id, and text.
struct found {
  std::uint64_t address = 0;
  std::uint64_t type = 0;
  std::string text;
};

found decode_found(const std::vector<std::byte>& b) {
  found f;
  if (b.size() < 16) throw decode_error("strata::mpi: a short lookup reply");
  std::memcpy(&f.address, b.data(), 8);
  std::memcpy(&f.type, b.data() + 8, 8);
  f.text.assign(reinterpret_cast<const char*>(b.data() + 16), b.size() - 16);
  return f;
}

// Keeps the raw reply bytes (the bridge's reply sink interface).
struct raw_reply final : detail::reply_sink {
  explicit raw_reply(std::shared_ptr<strata::detail::future_state<std::vector<std::byte>>> s) : state(std::move(s)) {}
  void value(reader& r) override {
    std::vector<std::byte> b(r.left());
    r.bytes(b.data(), b.size());
    state->value.emplace(std::move(b));
    state->finish();
  }
  void error(std::string what) override {
    state->error = std::make_exception_ptr(remote_error(what));
    state->finish();
  }
  std::shared_ptr<strata::detail::future_state<std::vector<std::byte>>> state;
};

}  // namespace

void session::publish_address(actor_address a, std::uint64_t type, const std::type_info& t, std::string_view name) {
  m_b->publish(a, type, strata::detail::readable_name(t), name);
}

actor_address session::lookup(int rank, std::string_view name, const std::type_info& t) {
  if (rank < 0 || rank >= size()) {
    throw usage_error("strata::mpi::actor_at: rank " + std::to_string(rank) + " does not exist (ranks 0.." +
                      std::to_string(size() - 1) + ")");
  }
  const std::uint64_t want = strata::detail::actor_type_id(t);
  const auto type_error = [&](const std::string& published_as) {
    return usage_error("strata::mpi::actor_at: rank " + std::to_string(rank) + " published \"" + std::string(name) +
                       "\" as " + published_as + ", not " + strata::detail::readable_name(t));
  };
  std::pair<int, std::string> key{rank, std::string(name)};
  {
    std::lock_guard lock(m_b->found_m);
    auto it = m_b->found.find(key);
    if (it != m_b->found.end()) {
      if (it->second.type != want) throw type_error(it->second.type_name);
      return actor_address::from_bits(it->second.address);
    }
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_b->cfg().lookup_ms);
  std::vector<std::byte> ask;
  ask.resize(8);
  ask.insert(ask.end(), reinterpret_cast<const std::byte*>(name.data()),
             reinterpret_cast<const std::byte*>(name.data() + name.size()));
  for (std::chrono::microseconds pause{100};; pause = std::min(pause * 2, std::chrono::microseconds{20'000})) {
    found f;
    if (rank == m_b->rank()) {
      f = decode_found(m_b->directory_entry(name));
    } else {
      auto st = std::make_shared<strata::detail::future_state<std::vector<std::byte>>>(&m_rt.core());
      const std::uint64_t request = m_b->expect_reply(rank, std::make_unique<raw_reply>(st));
      std::memcpy(ask.data(), &request, sizeof request);
      m_b->post(rank, detail::handler::lookup, ask.data(), ask.size());
      future<std::vector<std::byte>> reply(std::move(st));
      f = decode_found(get(reply));
    }
    if (f.address != 0) {
      {
        std::lock_guard lock(m_b->found_m);
        m_b->found.try_emplace(std::move(key), detail::bridge::found_name{f.address, f.type, f.text});
      }
      if (f.type != want) throw type_error(f.text);
      return actor_address::from_bits(f.address);
    }
    if (std::chrono::steady_clock::now() >= until) {
      throw usage_error("strata::mpi::actor_at: rank " + std::to_string(rank) + " has not published \"" +
                        std::string(name) + "\" within " + std::to_string(m_b->cfg().lookup_ms) +
                        " ms (STRATA_MPI_LOOKUP_MS); it published " + f.text);
    }
    // Not yet published: ask again, making progress meanwhile if this
    // thread is the MPI owner.
    const auto resume = std::chrono::steady_clock::now() + pause;
    while (std::chrono::steady_clock::now() < resume) {
      if (!owner_here() || progress() == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace strata::mpi
