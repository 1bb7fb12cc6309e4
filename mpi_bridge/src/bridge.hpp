// The bridge: the MPI side of a session.
//
// Threads. Producers (workers, the main thread, any thread) post items; one
// owner makes the bridge's MPI calls: the progress thread, or, under
// MPI_THREAD_FUNNELED, the session's thread inside the session's calls.
// With a progress thread, a thread outside the workers that waits (get(),
// progress()) may run a pass itself when the owner is not in one (help():
// try_lock of the MPI lock): every pass holds that lock, so passes, and the
// inline handlers they run, never overlap.
//
// Send path. post(dest, item) appends the item to dest's lane under the
// lane's mutex: into the lane's open buffer, which is sealed (header
// written, sequence number taken) when the next item would not fit, and
// queued. The owner starts at most two MPI_Isend per link (double
// buffering, as Conveyors' porters), and seals open buffers itself when
// they are older than flush_delay, when no producer posted since its last
// pass (the producers went idle), at once in latency mode when the link has
// nothing in flight, on flush(), and before joining a termination wave. An
// item too big for a buffer takes the large path: a notice item in the
// ordered stream, then a one-item buffer on the large tag (Open MPI moves
// it by rendezvous; the receiver allocates only when it receives it).
// Sealed, unsent bytes above max_pending_bytes make producers wait.
//
// Receive path. A ring of persistent MPI_Recv_init requests (ANY_SOURCE, the
// data tag, the session's data communicator) tested with a bounded
// MPI_Testsome each pass; each completed buffer is checked whole
// (wire.hpp), put in sequence order per source (Testsome may return two
// buffers of one source out of order; a held buffer is copied), then its
// items are dispatched: a task is spawned on the runtime, a reply fills its
// future, an actor message becomes a local message frame. The large tag
// is probed (MPI_Improbe) only while a notice said a large buffer is due.
//
// Locks. A producer holds its lane's mutex for one append; the owner takes
// a lane's mutex with try_lock on its routine passes (a busy lane has an
// active producer: it is neither idle nor due, and the next pass comes in a
// microsecond), and blocks only to force a seal (flush, quiescence). A
// producer spins briefly before it blocks, so the owner's short critical
// sections do not put it to sleep in the kernel.
//
// Wake-ups. The owner spins, then yields, then sleeps on a condition
// variable with a timeout that grows to 1 ms (incoming MPI traffic cannot
// wake it: Open MPI has no asynchronous progress), so an idle rank costs a
// wake-up a millisecond. A producer appends under its lane's mutex and then
// reads `m_sleeping`; it wakes the owner (bumps `m_posted`, notifies) only
// when that is set. The owner sets `m_sleeping` (seq_cst) and then looks at
// every lane under its mutex before it waits: either the producer's read
// comes after the owner's store and it wakes the owner, or the owner's
// look comes after the producer's unlock and it sees the item.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
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

namespace strata::mpi::detail {

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
class bridge;
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
  bool in_pass_here() const noexcept;
  void wait_quiescent();
  std::mutex& mpi_lock() noexcept { return m_mpi; }
  session_stats stats() const;

  // Remote actors (bridge_actors.cpp).
  void post_message(actor_address to, std::uint64_t type, const std::vector<std::byte>& bytes,
                    std::unique_ptr<strata::detail::remote_answer> answer) override;
  void answer(int source, std::uint64_t request, strata::detail::answer_status s,
              const std::vector<std::byte>& bytes) noexcept override;
  void finished() noexcept override;
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
  struct outgoing {
    std::vector<std::byte> bytes;
    bool large = false;
  };
  // A directed link to `dest`: producers append under `m`; the owner takes
  // sealed buffers. Aligned so that two links' locks never share a line.
  struct alignas(128) lane {
    std::mutex m;
    buffer_builder open;            // under m
    clock::time_point opened;       // under m: when open got its first item
    std::deque<outgoing> sealed;    // under m
    std::uint64_t next_sequence = 0;  // under m
    std::uint64_t posts = 0;          // under m: items posted, ever
    // Hints for the owner's routine passes, so that it takes m only when
    // there is something to do, and not on every pass (a spinning owner
    // that locks the lane each pass makes every append of a producer pay
    // for a cache line coming back). Written under m, once per buffer
    // (open: its first item; sealed: a buffer queued, the queue emptied);
    // read relaxed by the owner, which then confirms under m.
    std::atomic<bool> has_open{false};
    std::atomic<bool> has_sealed{false};
    // Owner only.
    std::uint64_t seen_posts = 0;     // posts at the owner's last look: equal means the producers went idle
    clock::time_point next_look{};    // the owner's next routine look at an open buffer
    int in_flight = 0;
    clock::time_point last_sent{};
    // Set by the owner when the peer said goodbye; read by producers.
    std::atomic<bool> departed{false};
    // Counters: under m.
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
  void seal_locked(lane& l, int dest, std::uint64_t peer_stats::*reason);
  void post_local(handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn);
  std::size_t seal_due(bool force);
  std::size_t start_sends(bool block = false);
  bool lanes_busy();
  std::uint64_t items_sent();
  std::size_t test_sends();
  std::size_t test_receives();
  std::size_t probe_large();
  std::size_t step_quiescence();
  void accept(int source, const std::byte* p, std::size_t n, const buffer_header& h);
  void dispatch_buffer(int source, const std::byte* p, const buffer_header& h);
  void dispatch_item(int source, handler h, const std::byte* p, std::size_t n);
  void run_task(int source, const remote_entry* e, std::uint64_t request, std::vector<std::byte> args);
  void run_inline(int source, const remote_entry* e, std::uint64_t request, const std::byte* args, std::size_t n);
  void invoke(int source, const remote_entry* e, std::uint64_t request, const std::byte* args, std::size_t n);
  void dispatch_actor(int source, const std::byte* p, std::size_t n);
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
  void shutdown_mpi() noexcept;

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
  std::atomic<std::uint64_t> m_next_request{1};

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
  clock::time_point m_started;
};

}  // namespace strata::mpi::detail
