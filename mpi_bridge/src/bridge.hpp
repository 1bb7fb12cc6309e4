// The bridge: the MPI side of a session.
//
// Threads. Producers (workers, the main thread, any thread) post items; one
// owner makes the bridge's MPI calls: the progress thread, or a worker of
// the runtime, the comm worker, whose passes are a work source
// (progress=worker: comm_worker.hpp), or, under MPI_THREAD_FUNNELED, the
// session's thread inside the session's calls. With a progress thread or a
// comm worker, a thread outside the workers that waits (get(),
// progress()) may run a pass itself when the owner is not in one (help():
// try_lock of the MPI lock): every pass holds that lock, so passes, and the
// inline handlers they run, never overlap.
//
// Send path. Every producer thread has an outbox (one per thread and
// session, made on its first post): an open buffer per destination rank.
// post(dest, item) appends to the open buffer of dest without a lock (Fast
// appends); what changes which buffer a slot holds takes the outbox's spin
// lock. When the next item would not fit, the producer seals the buffer
// (sequence number taken) and queues it on dest's link, then starts the
// link's sends itself if no one is making MPI calls (try_lock of the MPI
// lock: MPI_Isend and MPI_Test only, no receives, no handlers), else the
// owner does. The owner starts at most two MPI_Isend per link (double
// buffering, as Conveyors' porters), and copies out what open buffers hold
// when they are older than flush_delay, when their producer posted nothing
// since its last look (the producer went idle), at once in latency mode
// when the link has nothing in flight (there the producer seals itself, and
// sends, when its link is idle; a reply, which somebody waits for, is
// sealed so in either mode), on flush(), and before joining a termination
// wave. A thread's items enter a link in the order it wrote them: seals
// and copy-outs of one outbox are made under its lock and queued under the
// link's mutex while still holding it. An item too big for a buffer takes
// the large path: a notice item in the thread's ordered stream, then a
// one-item buffer on the large tag queued right after it (Open MPI moves it
// by rendezvous; the receiver allocates only when it receives it). Sealed,
// unsent bytes above max_pending_bytes make producers wait.
//
// Fast appends. An item that fits the listed slot's buffer is written past
// its cursor and published by one release store of the cursor: no locked
// instruction (a lock's exchange waits for the previous item's stores to
// drain). Others never take a producer's buffer: the
// owner's looks, flush() and the waves copy the items between `taken` and
// the cursor (acquire) into a buffer of their own, under the lock; the
// bytes past the cursor are the producer's alone. The producer's own seal
// (full, latency, a reply) takes its buffer whole, what was not taken
// moved to the front. A buffer due by the timer while its producer may be
// streaming into it is not copied: the owner clears `listed` (a request;
// nothing is freed), and the producer's next post to it takes the locked
// path and seals it whole; one still there at the next look is copied. A
// slot stays listed, its buffer kept, after a copy-out, so the next items
// need no lock either; an owner that sees an open buffer sleeps no longer
// than a look's interval, since fast appends wake no one. A retire unlists
// the slots of an outbox that posted nothing
// for k_retire_after and whose slots are drained: under the lock it clears
// `listed`, runs one membarrier (MEMBARRIER_CMD_PRIVATE_EXPEDITED) for all
// the outboxes it retires, then frees each buffer, unless the outbox's
// `busy` is set or the slot's cursor moved (then it is listed again: a
// producer preempted inside an append is not waited for). The producer
// stores `busy`, then loads `listed` (a compiler barrier between them):
// after the membarrier either its `busy` is seen, or its load sees `listed`
// false and it takes the locked path, which opens a buffer, lists it and
// wakes the owner as before. Without membarrier every append takes the
// lock.
//
// Per-thread buffers, not one shared buffer per link: a shared one put a
// mutex (two atomic read-modify-writes, and the line moving between
// producers) on every item, and the owner could neither seal nor take it
// without stalling them. The cost is memory: an outbox holds a buffer for
// each rank it posts to, of min(buffer_bytes, 4 MiB / peers) (at least
// 4 KiB, or the item), allocated on first use and handed to MPI when sealed.
//
// Receive path. A ring of persistent MPI_Recv_init requests (ANY_SOURCE, the
// data tag, the session's data communicator) tested with a bounded
// MPI_Testsome each pass; each completed buffer is checked whole
// (wire.hpp), put in sequence order per source (Testsome may return two
// buffers of one source out of order; a held buffer is copied), then its
// items are dispatched: a task is spawned on the runtime, a reply fills its
// future, actor messages go to their workers' inboxes in a batch per worker
// (bridge_actors.cpp). The large tag
// is probed (MPI_Improbe) only while a notice said a large buffer is due.
//
// Local items. An item for the producer's own rank takes the same way,
// minus MPI. A call of an inline function (post_at's, submit_at's) is
// appended to the thread's buffer for its own rank, sealed like any other,
// and run by the owner in a pass as a received buffer is (run_self). So a
// rank's inline handlers all run in passes, one at a time (a histogram's
// bin needs no atomic), and the posting thread pays an append, not the
// handler's cache miss in the middle of its loop. Anything else for its own
// rank (a task, a reply, an actor lookup) runs at once on the posting thread
// (post_local), unless that thread still has items for its own rank waiting
// (an open self buffer, or outbox::self_queued): then it joins them and is
// sealed at once, so a thread's items for its own rank keep their order. A
// post from inside a pass runs at once: the pass runs one item at a time.
//
// Locks, in the order they nest: the MPI lock (a pass, a producer's
// send, serialized()), then an outbox's spin lock (a retire holds several),
// then a link's mutex. A producer holds its outbox lock to open or seal a
// buffer, and the link's mutex only to queue a sealed buffer. The owner's
// routine look at an outbox is a try_lock (a locked outbox has an active
// producer: it is neither idle nor due, and the next look comes soon); it
// blocks only to force a copy-out (flush, quiescence). The send state of the links (requests, in_flight)
// is under the MPI lock.
//
// Wake-ups. The owner spins, then yields, then sleeps on a condition
// variable: for a look's interval while some slot has a buffer (k_open_wait;
// the comm worker's k_idle_wait_busy_ns), else with a timeout that grows
// to 1 ms (incoming MPI traffic
// cannot wake it: Open MPI has no asynchronous progress), so an idle rank
// costs a wake-up a millisecond. A producer wakes it (bumps `m_posted`,
// notifies) only when `m_sleeping` is set and it opened a buffer (the owner
// must come back to seal it in time; not if its sleep, which it publishes
// in m_wait_until, ends within flush_delay anyway: nudge_open) or queued
// one it could not send. While a thread waits in get() and makes the passes
// itself (help_wait), the owner sleeps instead of spinning beside it
// (comm_worker.hpp, Helpers). Both
// sides are a store, a seq_cst fence and a load: the producer stores its
// hint (has_open, has_sealed) and loads m_sleeping; the owner stores
// m_sleeping and loads every hint before it waits; one of the two sees the
// other. The comm worker sleeps in its idle wait instead, and producers
// wake it through the core's protocol (notify_worker); nudge_owner picks
// the one that applies.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <strata/mpi.hpp>

#include "quiescence.hpp"
#include "wire.hpp"

namespace strata::detail {
struct worker;
}  // namespace strata::detail

namespace strata::mpi::detail {

class comm_source;
struct posted_run;
using clock = std::chrono::steady_clock;

inline constexpr int k_tag_data = 1;
inline constexpr int k_tag_large = 2;

// Remote actors (bridge_actors.cpp): the bridge is the actor system's
// remote_port while it lives (strata/actors/ext/remote.hpp), and the
// remote_return of the frames it delivers. An actor message counts as sent
// when posted and done when its frame finished (after its answer, which is
// a reply item counted like any other). Names: publish records (name ->
// address, type) in a directory; a lookup item asks a rank's directory and
// its reply says what is there; actor_at retries until lookup_ms.
// A spin lock for an outbox: its producer takes it for every append, and
// nearly always finds it free (one exchange; the release is a plain store).
class spin_lock {
 public:
  bool try_lock() noexcept {
    // acquire: pairs with unlock's release (the previous holder's writes).
    return !m_held.load(std::memory_order_relaxed) && !m_held.exchange(true, std::memory_order_acquire);
  }
  void lock() noexcept {
    if (!try_lock()) lock_contended();  // the uncontended case inline: one exchange
  }
  void unlock() noexcept { m_held.store(false, std::memory_order_release); }  // pairs with try_lock

 private:
  void lock_contended() noexcept;  // spins a little, then yields (the holder may be preempted)
  std::atomic<bool> m_held{false};
};

// One MPI message's bytes: a buffer header, then items.
struct outgoing {
  std::unique_ptr<std::byte[]> bytes;
  std::size_t size = 0;
  bool large = false;
  std::size_t capacity = 0;  // a reusable buffer's (it goes back to the bridge once sent), else 0
};

// A sealed buffer waiting on a link. Allocated before anything is changed
// (a post that cannot have one fails with nothing counted or queued), then
// linked without allocating.
struct outbox;
struct queued {
  outgoing out;
  std::unique_ptr<queued> next;
  outbox* self_from = nullptr;  // a buffer for this rank: the outbox whose self_queued counts it
};

// A producer thread's buffers (see Send path above). Outboxes live as long
// as their bridge, in a list the owner walks; one whose thread ended is
// taken over by the next new producer.
struct alignas(128) outbox {
  struct slot {
    // The open buffer (header room first), null when the slot is empty, and
    // its capacity: written under lock, by the producer or a retire (Fast
    // appends); read by the producer's fast append.
    std::unique_ptr<std::byte[]> buf;
    std::size_t capacity = 0;
    // Bytes written (header room included) in the low half, items in the
    // high half: one release store publishes an item. Written by the
    // producer alone (its fast append, or under lock) and by a retire;
    // read with acquire, under lock, by whoever copies out what it holds.
    std::atomic<std::uint64_t> cursor{0};
    // Under lock: how far the buffer's bytes and items were copied out and
    // queued by others (the owner's looks, flush, waves): the producer's own
    // seal sends only what lies beyond.
    std::size_t taken = 0;
    std::uint32_t taken_items = 0;
    // Its producer may append without the lock. Set under lock when a
    // buffer opens; cleared under lock by the producer's own seal, by a
    // retire, or by the owner asking the producer to seal (Fast appends).
    std::atomic<bool> listed{false};
    int open_at = -1;  // under lock: index in `open`, -1 without a buffer
    // Under lock: when what is not yet taken got its first item; max() while
    // no one knows (after a copy-out, until the next look sees more).
    std::chrono::steady_clock::time_point opened;
    // Items and bytes posted to this rank, ever. Written only by the
    // outbox's producer (no read-modify-write), read relaxed by stats().
    std::atomic<std::uint64_t> items_sent{0};
    std::atomic<std::uint64_t> bytes_sent{0};
  };
  static constexpr std::uint64_t k_used_mask = 0xffff'ffffu;
  static constexpr std::uint64_t k_one_item = std::uint64_t{1} << 32;
  // Three lines: what the producer writes on every post; the hints the
  // owner reads on every pass (written once per buffer); the owner's own.
  // Sharing one line made every append wait for it to come back from the
  // spinning owner's core (a quarter of the posting thread's time).
  spin_lock lock;
  // Set by the producer around a fast append (plain stores; a retire's
  // membarrier makes them visible: Fast appends).
  std::atomic<bool> busy{false};
  std::unique_ptr<slot[]> slots;  // one per rank
  std::vector<int> open;          // under lock: the ranks whose slot has a buffer
  // Items posted through this outbox, ever (its producer writes, with no
  // read-modify-write): the termination protocol's `sent` is the sum over
  // outboxes (items_sent() in bridge_progress.cpp says why relaxed is
  // enough), and the owner's idle test compares it with seen_posts.
  std::atomic<std::uint64_t> posts{0};
  // Inline calls to the producer's own rank, run on the spot and counted in
  // neither `posts` nor done (post_local says why); a statistic (tasks_run).
  std::atomic<std::uint64_t> inline_runs{0};
  // Buffers of this outbox's items for its own rank that are sealed and not
  // yet run (Local items in the send path). Incremented when one is sealed
  // (under lock), decremented with release once the owner ran it (all
  // read-modify-writes); the producer's acquire load under lock that reads 0
  // sees everything it posted to its own rank done, so an item it then runs
  // at once comes after them.
  std::atomic<std::uint32_t> self_queued{0};
  // A hint: some slot has a buffer. Written under lock; read relaxed by the
  // owner's routine look, and after a seq_cst fence before it sleeps.
  alignas(64) std::atomic<bool> has_open{false};
  // Its thread ended (set by the thread's exit, taken back by a new one).
  std::atomic<bool> abandoned{false};
  outbox* next = nullptr;  // the list: set before the outbox is published, then fixed
  // Under the MPI lock: when the owner's routine looks at it next, and since
  // when its posts have not changed (a retire waits for k_retire_after).
  alignas(64) std::chrono::steady_clock::time_point next_look{};
  std::chrono::steady_clock::time_point quiet_since{};
  // Under lock: posts at the last look (equal next time: the producer went idle).
  std::uint64_t seen_posts = 0;
};

// Whether appends may go without the outbox lock here (bridge_outbox.cpp).
bool fast_appends_possible() noexcept;

class bridge;
// Ids of the bridges alive (bridge_send.cpp): a thread's outbox cache is
// keyed by them, and a thread that ends touches only live bridges' outboxes.
std::uint64_t new_bridge_id();
void forget_bridge_id(std::uint64_t id) noexcept;
// Marks the calling thread as running b's pass (its posts come from inline
// handlers of that pass).
class pass_scope {
 public:
  explicit pass_scope(const bridge* b) noexcept;
  ~pass_scope();
  pass_scope(const pass_scope&) = delete;
  pass_scope& operator=(const pass_scope&) = delete;

 private:
  const bridge* m_outer;
};

class bridge final : public strata::detail::remote_port, public strata::detail::remote_return {
 public:
  struct init {
    int* argc = nullptr;
    char*** argv = nullptr;
    bool use_world = true;
    MPI_Comm app_comm = MPI_COMM_NULL;
  };
  bridge(runtime& rt, const config& c, const init& how);
  bridge(const bridge&) = delete;
  bridge& operator=(const bridge&) = delete;
  ~bridge() override;

  int rank() const noexcept { return m_rank; }
  int size() const noexcept { return m_size; }
  MPI_Comm data_comm() const noexcept { return m_data; }
  thread_level level() const noexcept { return m_level; }
  progress_mode mode() const noexcept { return m_mode; }
  bool owns_mpi() const noexcept { return m_owns_mpi; }
  bool owner_here() const noexcept;

  // Any thread. Counts the item as sent.
  void post(int dest, handler h, const std::byte* payload, std::size_t n) { post(dest, h, nullptr, 0, payload, n); }
  // One item whose payload is head then body.
  void post(int dest, handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn);
  std::uint64_t expect_reply(int rank, std::unique_ptr<reply_sink> sink);
  void flush_all();
  // The owner only: one pass; returns the units of work done.
  std::size_t pass();
  // Any other thread, while it waits (get, progress()): one pass if no one
  // is in one (try_lock of the MPI lock), else 0. Under SERIALIZED and
  // MULTIPLE the MPI lock makes its MPI calls as serial as the owner's.
  std::size_t help();
  // A thread outside the workers that waits (session::get) and calls help()
  // in a loop: between the two, the comm worker leaves the passes to it.
  void help_begin() noexcept;
  void help_end(bool satisfied) noexcept;
  // The owner's sleep while a thread helps (comm_worker.hpp, Helpers).
  static constexpr long k_helper_wait_ns = 1'000'000;
  // This rank's own buffers a pass runs at most (bounded work per pass, as
  // the receives' Testsome is).
  static constexpr std::size_t k_self_per_pass = 4;
  bool in_pass_here() const noexcept;
  void wait_quiescent();
  // serialized(): the MPI lock held by the application's thread, which then
  // neither sends nor waits for the owner when it posts.
  void lock_serialized();
  void unlock_serialized() noexcept;
  session_stats stats() const;

  // progress=worker (comm_worker.hpp), on the comm worker only: one pass,
  // after sealing what the worker posted itself when it went idle; whether
  // a pass has work; how long its idle wait may sleep.
  std::size_t worker_pass(bool idle) noexcept;
  bool worker_ready(bool parking) noexcept;  // parking: the worker's re-check before it sleeps
  long worker_idle_timeout_ns() noexcept;

  // Remote actors (bridge_actors.cpp).
  void post_message(actor_address to, std::uint64_t type, const std::byte* bytes, std::size_t n,
                    std::unique_ptr<strata::detail::remote_answer> answer) override;
  void answer(int source, std::uint64_t request, strata::detail::answer_status s,
              const std::vector<std::byte>& bytes) noexcept override;
  void finished() noexcept override;
  void malformed() noexcept override;
  void publish(actor_address a, std::uint64_t type, const std::string& type_name, std::string_view name);
  // The directory's entry for `name` as a lookup reply's payload.
  std::vector<std::byte> directory_entry(std::string_view name) const;
  const config& cfg() const noexcept { return m_cfg; }
  // actor_at's names already found, by (rank, name): a published name is
  // never bound again, so a found address stays right (an actor gone since
  // makes its messages dead letters, as locally).
  struct found_name {
    std::uint64_t address = 0;
    std::uint64_t type = 0;
    std::string type_name;
  };
  std::mutex found_m;
  std::map<std::pair<int, std::string>, found_name> found;

 private:
  // A directed link to `dest`: sealed buffers queued by producers (and the
  // owner) under `m`, sent by whoever holds the MPI lock. Aligned so that
  // two links' locks never share a line.
  struct alignas(128) lane {
    std::mutex m;
    std::unique_ptr<queued> head;     // under m: the sealed buffers, oldest first
    queued* tail = nullptr;           // under m
    std::uint64_t next_sequence = 0;  // under m
    void push(std::unique_ptr<queued> q) noexcept {  // under m
      std::unique_ptr<queued>& end = tail == nullptr ? head : tail->next;
      end = std::move(q);
      tail = end.get();
    }
    std::unique_ptr<queued> pop() noexcept {  // under m
      std::unique_ptr<queued> q = std::move(head);
      if (q != nullptr) {
        head = std::move(q->next);
        if (head == nullptr) tail = nullptr;
      }
      return q;
    }
    // A hint for passes, so that they take m only when a buffer waits:
    // written under m (a buffer queued, the queue emptied), read relaxed,
    // then confirmed under m.
    std::atomic<bool> has_sealed{false};
    // Under the MPI lock.
    int in_flight = 0;
    clock::time_point last_sent{};
    // in_flight as producers see it in latency mode (written under the MPI
    // lock, read relaxed: a hint).
    std::atomic<int> in_flight_hint{0};
    // Counters: under m (items and bytes sent are the outboxes').
    peer_stats st;
    // When the owner last accepted a buffer from this rank (ns since the
    // session started, -1: never). Relaxed: a report, read by stats().
    std::atomic<std::int64_t> last_heard_ns{-1};
  };
  struct send_slot {
    MPI_Request req = MPI_REQUEST_NULL;
    outgoing out;
    int dest = -1;
  };
  // Per source, owner only.
  struct inbound {
    std::uint64_t expected = 0;
    std::map<std::uint64_t, std::vector<std::byte>> held;
    unsigned large_due = 0;
  };

  void start_mpi(const init& how);
  void check_registries();
  // Outboxes (bridge_send.cpp).
  outbox& my_outbox();
  outbox& my_outbox_slow();
  outbox& adopt_outbox();
  void open_slot(outbox& ob, int dest, std::size_t item, bool stamp);
  std::unique_ptr<std::byte[]> unlist_slot(outbox& ob, int dest) noexcept;
  // Under ob.lock, by its producer: seals what dest's buffer holds and
  // queues it on the link in `node`, then `then` (a large buffer's node)
  // right after it, if given.
  void seal_slot(outbox& ob, int dest, std::uint64_t peer_stats::*reason, std::unique_ptr<queued> node,
                 std::unique_ptr<queued> then = nullptr) noexcept;
  void copy_slot(outbox& ob, int dest, std::uint64_t peer_stats::*reason);  // under ob.lock, by others
  void queue_sealed(outbox& ob, int dest, std::uint64_t peer_stats::*reason, std::unique_ptr<queued> node,
                    std::uint32_t items, std::unique_ptr<queued> then) noexcept;
  // Whatever post's fast append does not take: checks, errors, this rank's
  // items, the locked path.
  void post_slow(int dest, handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn);
  // The producer's append without the lock (Fast appends); false: take the
  // locked path.
  bool append_fast(outbox& ob, int dest, std::size_t item, handler h, const std::byte* head, std::size_t hn,
                   const std::byte* body, std::size_t bn) noexcept;
  std::size_t seal_outbox(outbox& ob, bool force, clock::time_point now);
  void retire_quiet(clock::time_point now);
  void queue_bare(int dest, const handler* item);  // a buffer of no items (a heartbeat) or of one empty item
  void kick_sends();
  static bool inline_call(handler h, std::size_t hn, const std::byte* body, std::size_t n) noexcept;
  void queue_alone(outbox& ob, std::unique_ptr<queued> q) noexcept;  // under ob.lock: a large item for this rank
  bool waiting_work(bool* open);
  void post_local(handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn);
  void count_inline_done() noexcept;
  std::size_t seal_due(bool force, bool open_only = false);
  std::size_t start_sends(bool block = false);
  // Items for this rank (bridge_local.cpp). In a pass: runs up to `max`
  // sealed buffers of this rank's own items.
  std::size_t run_self(std::size_t max);
  bool self_waiting(outbox& ob);  // this thread's items for its own rank wait to run (Local items)
  std::uint64_t items_sent();
  std::size_t test_sends();
  std::size_t test_receives();
  std::size_t probe_large();
  std::size_t receive_large(MPI_Message& msg, const MPI_Status& st);
  std::size_t step_quiescence();
  void accept(int source, const std::byte* p, std::size_t n, const buffer_header& h);
  void dispatch_buffer(int source, const std::byte* p, const buffer_header& h);
  void dispatch_item(int source, handler h, const std::byte* p, std::size_t n);
  void run_task(int source, const remote_entry* e, std::uint64_t request, std::vector<std::byte> args);
  void run_inline(int source, const remote_entry* e, std::uint64_t request, const std::byte* args, std::size_t n);
  void invoke(int source, const remote_entry* e, std::uint64_t request, const std::byte* args, std::size_t n);
  void invoke_posted(int source, const remote_entry* e, const std::byte* args, std::size_t n);
  void run_posted(int source, const remote_entry* e, const std::byte* args, std::size_t n);
  void run_gathered(posted_run& run) noexcept;  // dispatch_buffer's run of post_at items
  void report_posted_failure(int source, const remote_entry* e, const char* what) noexcept;
  void dispatch_actor(int source, const std::byte* p, std::size_t n);
  // The actor messages of one received buffer, a batch per destination
  // worker (bridge_actors.cpp), handed over when the buffer's items are
  // done, or an item threw out of dispatch_buffer.
  struct actor_batches {
    explicit actor_batches(bridge& b) noexcept : owner(b) {}
    actor_batches(const actor_batches&) = delete;
    actor_batches& operator=(const actor_batches&) = delete;
    ~actor_batches() { owner.hand_over(batches); }
    bridge& owner;
    std::vector<strata::detail::remote_batch> batches;
  };
  bool batch_actor(int source, const std::byte* p, std::size_t n, actor_batches& to);
  void send_batch(strata::detail::remote_batch& b, std::size_t worker) noexcept;
  void hand_over(std::vector<strata::detail::remote_batch>& batches) noexcept;
  void dispatch_lookup(int source, const std::byte* p, std::size_t n);
  void attach_actors();
  void detach_actors() noexcept;
  void forget_reply(std::uint64_t request) noexcept;
  void count_reject(reject r) noexcept {
    m_rejects[static_cast<std::size_t>(r)].fetch_add(1, std::memory_order_relaxed);  // relaxed: a counter
  }
  void progress_thread();
  std::size_t pass_locked(bool helper);
  void check_peers(clock::time_point now);
  void post_goodbyes();
  [[noreturn]] void silent_peer(int peer, std::int64_t heard_ns, clock::time_point now);
  void wake_owner() noexcept;
  // A producer that opened or queued a buffer: wakes the owner if it sleeps
  // (the store of its hint comes first; see Wake-ups).
  void nudge_owner() noexcept;
  // A producer that opened a buffer: as nudge_owner, but an owner whose
  // sleep ends within flush_delay is left asleep.
  void nudge_open() noexcept;
  void mark_after_help() noexcept;  // the calling thread's next post goes at once on an idle link
  outbox* find_my_outbox() noexcept;  // the calling thread's, or nullptr
  void shutdown_mpi() noexcept;
  std::size_t worker_pass_inner(bool idle);

  runtime& m_rt;
  config m_cfg;
  int m_rank = 0;
  int m_size = 1;
  bool m_owns_mpi = false;
  thread_level m_level = thread_level::single;
  progress_mode m_mode = progress_mode::thread;
  MPI_Comm m_data = MPI_COMM_NULL;
  MPI_Comm m_ctrl = MPI_COMM_NULL;
  std::thread::id m_owner_id;

  std::vector<std::unique_ptr<lane>> m_lanes;
  // Set by the owner (release) when a peer said goodbye; read by every post
  // (acquire). A line per peer, apart from the lanes: the owner's writes to
  // a lane's send state (every send, every buffer received) made each
  // post's read of a flag beside them a miss.
  struct alignas(64) departure {
    std::atomic<bool> flag{false};
  };
  std::unique_ptr<departure[]> m_departed;
  // The outboxes: a list the owner walks from its head (acquire), pushed
  // under m_outbox_m (release); never shortened while the bridge lives.
  std::atomic<outbox*> m_outboxes{nullptr};
  std::mutex m_outbox_m;
  std::uint64_t m_id = 0;        // this bridge among all of the process's, ever (the threads' outbox caches)
  std::size_t m_slot_bytes = 0;  // an outbox buffer's capacity (see Send path)
  // Fast appends (config::fast_append, and the kernel's membarrier); fixed
  // at construction. Retires: under the MPI lock.
  bool m_fast_post = false;
  // Long enough that a stream's pauses rarely pay a membarrier (a system
  // call that interrupts every running thread of the process), short
  // enough that a thread posting now and then does not keep its owner
  // waking every look's interval for long.
  static constexpr std::chrono::microseconds k_retire_after{250};
  static constexpr std::chrono::microseconds k_open_wait{10};  // the progress thread's sleep while a buffer is open
  std::vector<outbox*> m_retiring;  // reserved once: a retire never allocates under the outbox locks it holds
  clock::time_point m_next_retire{};
  std::atomic<std::uint64_t> m_slots_retired{0};  // written under the MPI lock, read by stats()
  // Sent buffers, reused: a fresh allocation costs its page faults again
  // (and for a large one, glibc maps and unmaps it each time): a tenth of a
  // posting thread's time on 64 KiB buffers, and a 1 MiB round trip took
  // 25 ms instead of 0.5. Outbox buffers (m_slot_bytes) in m_pool; large
  // ones by capacity in m_big, k_big_bytes in all.
  std::unique_ptr<std::byte[]> take_buffer(std::size_t bytes, std::size_t* capacity);
  void recycle(outgoing& o) noexcept;  // drops the buffer when the pool is full
  std::mutex m_pool_m;
  std::vector<std::unique_ptr<std::byte[]>> m_pool;  // under m_pool_m; at most k_pool_buffers
  std::vector<std::pair<std::size_t, std::unique_ptr<std::byte[]>>> m_big;  // under m_pool_m
  std::size_t m_big_bytes = 0;                                            // under m_pool_m
  static constexpr std::size_t k_pool_buffers = 64;
  static constexpr std::size_t k_big_bytes = std::size_t{64} << 20;
  // The owner's buffer for large receives (under the MPI lock): kept
  // between messages up to k_big_bytes.
  std::unique_ptr<std::byte[]> m_large_in;
  std::size_t m_large_in_capacity = 0;
  // Sealed and not yet sent, over all lanes (producers add, the owner
  // subtracts; relaxed: only a threshold for flow control).
  std::atomic<std::size_t> m_pending_bytes{0};
  std::atomic<std::uint64_t> m_producer_waits{0};

  // Owner only.
  void repost(std::size_t i);
  std::vector<send_slot> m_sends;
  std::vector<MPI_Request> m_recv_reqs;
  // Receive buffers: address space for max_message_bytes each, reserved
  // (MAP_NORESERVE) and touched only as far as messages reach, so that a
  // message longer than a buffer is received whole and rejected by the
  // checks instead of being truncated by MPI (Open MPI 4.1 frees a
  // persistent request that completes in error, and double-frees it at
  // MPI_Finalize).
  struct reserved {
    std::byte* p = nullptr;
    std::size_t size = 0;
  };
  std::vector<reserved> m_recv_bufs;
  std::size_t m_recv_capacity = 0;
  std::vector<int> m_indices;
  std::vector<MPI_Status> m_statuses;
  std::vector<inbound> m_in;
  std::uint64_t m_seen_posted = 0;

  // Replies awaited: producers insert, the owner (or a local reply) erases.
  std::mutex m_replies_m;
  std::unordered_map<std::uint64_t, std::pair<int, std::unique_ptr<reply_sink>>> m_replies;
  // m_replies.size(), stored under m_replies_m; read relaxed by the comm
  // worker (a hint: while replies are awaited its idle wait stays short).
  std::atomic<std::size_t> m_awaited{0};
  std::atomic<std::uint64_t> m_next_request{1};
  // Threads between help_begin and help_end (see Helpers in comm_worker.hpp).
  std::atomic<unsigned> m_helpers{0};
  // When the owner's current sleep ends (steady_clock ticks): the comm
  // worker's idle wait (worker_idle_timeout_ns) or the progress thread's
  // wait; stored before the owner reads the hints, read by nudge_open.
  std::atomic<std::int64_t> m_wait_until{0};

  // Termination counters (see quiescence.hpp): items sent are the lanes'
  // st.items_sent (items_sent()); m_done is seq_cst: the owner reads it when
  // it joins a wave, after flushing, and its increments follow the events
  // they count (and the posts those made) in each thread's program order.
  std::atomic<std::uint64_t> m_done{0};
  std::atomic<std::uint64_t> m_tasks_run{0};
  std::atomic<std::uint64_t> m_task_errors{0};
  std::atomic<std::uint64_t> m_late_epoch{0};
  std::atomic<std::uint64_t> m_rounds{0};       // waves completed (stats)
  std::atomic<std::uint64_t> m_tasks_live{0};  // spawned by the bridge, not finished: ~bridge waits
  std::array<std::atomic<std::uint64_t>, k_reject_reasons> m_rejects{};
  std::atomic<std::uint64_t> m_actor_messages{0};  // relaxed: a counter (stats)
  // The runtime's actors: written once by attach_actors, before the first
  // pass; read by the passes (batch_actor, send_batch).
  strata::detail::actor_system* m_actors = nullptr;

  // The published actors: name -> (address bits, type id, type name).
  struct published {
    std::uint64_t address = 0;
    std::uint64_t type = 0;
    std::string type_name;
  };
  mutable std::mutex m_dir_m;
  std::map<std::string, published, std::less<>> m_dir;

  // Quiescence: the waiter sets m_quiesce_wanted; the owner runs the waves
  // and bumps m_epoch (release; the waiter acquires it).
  quiescence_detector m_detector;
  std::atomic<bool> m_quiesce_wanted{false};
  std::atomic<std::uint32_t> m_epoch{0};
  // The highest epoch of a buffer received (owner writes; producers read
  // when they seal). Relaxed: a stamp for the late_epoch check, no ordering.
  std::atomic<std::uint32_t> m_seen_epoch{0};
  std::uint32_t stamp_epoch() const noexcept {
    return std::max(m_epoch.load(std::memory_order_relaxed), m_seen_epoch.load(std::memory_order_relaxed));
  }
  std::atomic<std::uint64_t> m_quiesce_calls{0};
  MPI_Request m_wave_req = MPI_REQUEST_NULL;
  std::uint64_t m_wave_local[2] = {0, 0};
  std::uint64_t m_wave_global[2] = {0, 0};
  std::uint64_t m_waves_this_call = 0;                 // owner only
  std::chrono::microseconds m_wave_pace{5};           // owner only
  clock::time_point m_next_wave{};                    // owner only
  std::size_t m_last_pass_waves = 0;                  // owner only
  bool m_owner_posted = false;                        // owner only: an inline handler posted in this pass
  clock::time_point m_next_peer_check{};              // owner only
  bool m_deadline_on = false;

  // The MPI lock: held by the owner through a pass, by serialized().
  std::mutex m_mpi;
  // Owner sleep and wake-up (see the top of the file).
  std::mutex m_sleep_m;
  std::condition_variable m_sleep_cv;
  std::atomic<bool> m_sleeping{false};
  std::atomic<std::uint64_t> m_posted{0};
  std::mutex m_done_m;
  std::condition_variable m_done_cv;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
  // progress=worker: the comm worker and its source (set in the
  // constructor, then fixed); the rest is the comm worker's own.
  strata::detail::worker* m_comm = nullptr;
  comm_source* m_comm_source = nullptr;
  unsigned m_hot_passes = 0;        // the hot window's passes left (bridge_progress.cpp)
  clock::time_point m_hot_until{};  // and its end in time, or its last pass's
  clock::time_point m_last_pass{};
  long m_idle_wait_ns = 0;
  bool m_wave_started = false;  // step_quiescence started a wave in this pass
  std::size_t m_pass_received = 0;  // under the MPI lock: buffers the last pass received (or ran, of this rank's own)
  clock::time_point m_now;          // under the MPI lock: when the last pass started (pass_locked)
  unsigned m_empty_passes = 0;  // idle passes in a row that found nothing
  clock::time_point m_started;
};

}  // namespace strata::mpi::detail
