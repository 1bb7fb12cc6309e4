// remote_batch, the actors' side of messages a transport received in bulk
// (strata/actors/ext/remote.hpp), without MPI: the transport's end is a
// remote_return here that records what the batch tells it. A batch goes to
// its worker as one inbox item and delivers in order, behind what the inbox
// held before it and ahead of what came after; a message that does not
// decode is answered, finished and reported while the rest still go; asks
// in a batch are answered; a batch destroyed undelivered finishes each of
// its messages once and answers its asks "dropped".
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <strata/actors/ext/remote.hpp>
#include <strata/mpi/serialize.hpp>
#include <strata/runtime/stats.hpp>
#include <strata/strata.hpp>

#include "runtime_config.hpp"

namespace {

namespace sd = strata::detail;

struct step {
  std::uint64_t seq;
};
struct next_seq {};
struct order_errors {};

// Checks that steps come in sequence.
struct sequence : strata::actor<sequence> {
  std::uint64_t next = 0;
  std::uint64_t errors = 0;
  void receive(strata::actor_context&, const step& s) {
    if (s.seq != next) errors++;
    next = s.seq + 1;
  }
  std::uint64_t receive(strata::actor_context&, const next_seq&) { return next; }
  std::uint64_t receive(strata::actor_context&, const order_errors&) { return errors; }
};

// The transport's end: answers, finished messages and malformed ones, counted.
struct recording_return final : sd::remote_return {
  void answer(int source, std::uint64_t request, sd::answer_status s,
              const std::vector<std::byte>& bytes) noexcept override {
    std::lock_guard lock(m);
    answers.push_back({source, request, s, bytes});
  }
  void finished() noexcept override { finished_count.fetch_add(1); }
  void malformed() noexcept override { malformed_count.fetch_add(1); }

  struct answered {
    int source;
    std::uint64_t request;
    sd::answer_status status;
    std::vector<std::byte> bytes;
  };
  std::mutex m;
  std::vector<answered> answers;
  std::atomic<int> finished_count{0};
  std::atomic<int> malformed_count{0};
};

template <class M>
std::vector<std::byte> encode(const M& m) {
  std::vector<std::byte> out;
  strata::mpi::writer w(out);
  w.value(m);
  return out;
}

// The function a transport finds for (actor type, message type): the
// registry's entry, as the MPI bridge looks it up.
template <class M>
sd::remote_deliver_fn deliver_fn() {
  const sd::remote_message_entry* e = sd::find_remote_message(sd::remote_message<sequence, M>::id);
  return e != nullptr ? e->deliver : nullptr;
}

template <class M>
void add(sd::remote_batch& b, strata::actor_address to, const M& m, std::uint64_t request = 0) {
  const std::vector<std::byte> bytes = encode(m);
  b.add(to, deliver_fn<M>(), request, bytes.data(), bytes.size());
}

std::uint64_t messages_remote(const strata::runtime& rt) {
  std::uint64_t n = 0;
  for (const auto& w : rt.stats().workers) n += w.counter("messages_remote");
  return n;
}

strata::config two_workers() { return strata::test::workers(2); }

TEST(RemoteBatch, DeliversInOrderBetweenWhatTheInboxHeldAndWhatCameAfter) {
  strata::runtime rt(two_workers());
  sd::actor_system& sys = sd::actors_of(rt.core());
  auto a = rt.spawn_actor<sequence>();
  recording_return ret;
  constexpr std::uint64_t k_before = 100, k_batch = 5000, k_after = 100;
  for (std::uint64_t i = 0; i < k_before; ++i) a.send(step{i});
  sd::remote_batch b(3, &ret);
  for (std::uint64_t i = 0; i < k_batch; ++i) add(b, a.address(), step{k_before + i});
  ASSERT_EQ(b.size(), k_batch);
  sd::deliver_batch(sys, a.address().worker(), std::move(b));
  for (std::uint64_t i = 0; i < k_after; ++i) a.send(step{k_before + k_batch + i});
  EXPECT_EQ(a.ask(next_seq{}).get(), k_before + k_batch + k_after);
  EXPECT_EQ(a.ask(order_errors{}).get(), 0u);
  rt.wait_idle();
  EXPECT_EQ(ret.finished_count.load(), static_cast<int>(k_batch));
  EXPECT_EQ(ret.malformed_count.load(), 0);
  EXPECT_TRUE(ret.answers.empty());  // sends: nothing to answer
  // Each of the batch's messages counts as one that arrived through the
  // inbox, as the sends and the two asks from this thread do.
  EXPECT_EQ(messages_remote(rt), k_before + k_batch + k_after + 2);
}

TEST(RemoteBatch, AnUndecodableMessageIsReportedAndTheRestGo) {
  strata::runtime rt(two_workers());
  sd::actor_system& sys = sd::actors_of(rt.core());
  auto a = rt.spawn_actor<sequence>();
  recording_return ret;
  sd::remote_batch b(1, &ret);
  add(b, a.address(), step{0});
  add(b, a.address(), step{1});
  const std::byte short_step[3] = {};  // a step needs 8 bytes
  b.add(a.address(), deliver_fn<step>(), 0, short_step, sizeof short_step);
  add(b, a.address(), step{2});
  add(b, a.address(), next_seq{}, 41);  // an ask inside the batch
  const std::byte long_ask[9] = {};     // an ask whose message does not decode (trailing bytes): answered "threw"
  b.add(a.address(), deliver_fn<next_seq>(), 42, long_ask, sizeof long_ask);
  add(b, a.address(), step{3});
  sd::deliver_batch(sys, a.address().worker(), std::move(b));
  rt.wait_idle();
  EXPECT_EQ(a.ask(next_seq{}).get(), 4u);
  EXPECT_EQ(a.ask(order_errors{}).get(), 0u);
  EXPECT_EQ(ret.finished_count.load(), 7);
  EXPECT_EQ(ret.malformed_count.load(), 2);
  std::lock_guard lock(ret.m);
  ASSERT_EQ(ret.answers.size(), 2u);
  for (const auto& ans : ret.answers) {
    EXPECT_EQ(ans.source, 1);
    if (ans.request == 41) {
      EXPECT_EQ(ans.status, sd::answer_status::value);
      std::uint64_t v = 0;
      ASSERT_EQ(ans.bytes.size(), sizeof v);
      std::memcpy(&v, ans.bytes.data(), sizeof v);
      EXPECT_EQ(v, 3u);  // steps 0, 1, 2 ran before it
    } else {
      EXPECT_EQ(ans.request, 42u);
      EXPECT_EQ(ans.status, sd::answer_status::threw);
    }
  }
}

TEST(RemoteBatch, ADeadActorsMessagesAreDeadLetters) {
  strata::runtime rt(two_workers());
  sd::actor_system& sys = sd::actors_of(rt.core());
  recording_return ret;
  auto a = rt.spawn_actor<sequence>();
  // A slot of the actor's worker that never held an actor.
  const auto ghost = strata::actor_address::make(0, a.address().worker(), 4000, 1);
  sd::remote_batch b(2, &ret);
  add(b, ghost, step{0});
  add(b, ghost, next_seq{}, 7);
  add(b, a.address(), step{0});
  sd::deliver_batch(sys, a.address().worker(), std::move(b));
  EXPECT_EQ(a.ask(next_seq{}).get(), 1u);
  rt.wait_idle();
  EXPECT_EQ(ret.finished_count.load(), 3);
  std::lock_guard lock(ret.m);
  ASSERT_EQ(ret.answers.size(), 1u);
  EXPECT_EQ(ret.answers[0].request, 7u);
  EXPECT_EQ(ret.answers[0].status, sd::answer_status::dead_letter);
}

TEST(RemoteBatch, ABatchDestroyedUndeliveredFinishesEachMessageOnce) {
  recording_return ret;
  {
    sd::remote_batch b(5, &ret);
    const auto to = strata::actor_address::make(0, 0, 1, 1);
    add(b, to, step{0});
    add(b, to, next_seq{}, 11);
    add(b, to, step{1});
    sd::remote_batch moved(std::move(b));  // the moved-from batch holds nothing
    EXPECT_EQ(b.size(), 0u);               // NOLINT(bugprone-use-after-move): its state after a move is the point
    EXPECT_EQ(moved.size(), 3u);
  }
  EXPECT_EQ(ret.finished_count.load(), 3);
  EXPECT_EQ(ret.malformed_count.load(), 0);
  ASSERT_EQ(ret.answers.size(), 1u);
  EXPECT_EQ(ret.answers[0].source, 5);
  EXPECT_EQ(ret.answers[0].request, 11u);
  EXPECT_EQ(ret.answers[0].status, sd::answer_status::dead_letter);
  const std::string text(reinterpret_cast<const char*>(ret.answers[0].bytes.data()), ret.answers[0].bytes.size());
  EXPECT_NE(text.find("dropped"), std::string::npos) << text;
}

// A transport fills a batch up to k_bytes and then starts the next one.
TEST(RemoteBatch, FitsUpToItsSize) {
  recording_return ret;
  std::size_t held = 0;
  {
    sd::remote_batch b(0, &ret);
    EXPECT_TRUE(b.fits(sd::remote_batch::k_bytes * 4));  // an empty batch takes any message
    const auto to = strata::actor_address::make(0, 0, 1, 1);
    while (b.fits(sizeof(step))) add(b, to, step{b.size()});
    held = b.size();
    // A record is its 32-byte head and the message's 8 bytes.
    EXPECT_EQ(held, sd::remote_batch::k_bytes / (32 + sizeof(step)));
  }
  EXPECT_EQ(ret.finished_count.load(), static_cast<int>(held));
}

// A runtime that no longer accepts work refuses the batch: its messages
// are finished all the same, none twice.
TEST(RemoteBatch, ARefusedBatchFinishesItsMessages) {
  recording_return ret;
  auto rt = std::make_unique<strata::runtime>(two_workers());
  sd::actor_system& sys = sd::actors_of(rt->core());
  auto a = rt->spawn_actor<sequence>();
  rt->core().accepting.store(false);  // as shutdown does first
  sd::remote_batch b(0, &ret);
  add(b, a.address(), step{0});
  add(b, a.address(), next_seq{}, 3);
  EXPECT_THROW(sd::deliver_batch(sys, a.address().worker(), std::move(b)), strata::runtime_error);
  EXPECT_EQ(ret.finished_count.load(), 2);
  ASSERT_EQ(ret.answers.size(), 1u);
  EXPECT_EQ(ret.answers[0].status, sd::answer_status::dead_letter);
  rt->core().accepting.store(true);
  rt.reset();
}

}  // namespace
