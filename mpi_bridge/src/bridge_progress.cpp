// The bridge's quiescence waves, its progress pass and thread, heartbeats,
// the deadline and stats (see bridge.hpp, quiescence.hpp).
#include "bridge.hpp"

#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <strata/runtime/ext/worker.hpp>

#include "bridge_util.hpp"

namespace strata::mpi::detail {

// ---- Quiescence -------------------------------------------------------------

// Returns 1 when a wave completed (not counted as traffic by pass()).
//
// Pacing: the first wave of a call starts at once; after a wave that did
// not end it, the next starts as soon as this rank's counters moved (an
// item arrived or finished here), else after a delay that doubles from
// 5 µs to 1 ms. Every rank joins every wave (MPI_Iallreduce is
// collective), so a slow rank only delays the wave; meanwhile a rank that
// is waiting for its peers polls without spinning the CPU away from the
// workers that run the items in flight.
std::size_t bridge::step_quiescence() {
  if (!m_quiesce_wanted.load(std::memory_order_acquire)) return 0;
  if (m_wave_req == MPI_REQUEST_NULL) {
    const auto now = m_now;
    // Done read before sent, both seq_cst (either order is sound by the
    // two-wave argument; this one makes a first wave with sent == done
    // likelier to be the true state).
    const std::uint64_t done = m_done.load(), sent = items_sent();
    const bool moved = done != m_wave_local[1] || sent != m_wave_local[0];
    if (m_waves_this_call != 0 && !moved && now < m_next_wave) return 0;
    m_wave_pace = moved || m_waves_this_call == 0 ? std::chrono::microseconds(5)
                                                  : std::min<std::chrono::microseconds>(m_wave_pace * 2,
                                                                                       std::chrono::milliseconds(1));
    seal_due(true);
    run_self(SIZE_MAX);  // this rank's own items: done before the wave, not a wave later
    start_sends(true);
    m_wave_local[1] = m_done.load();
    m_wave_local[0] = items_sent();
    check(MPI_Iallreduce(m_wave_local, m_wave_global, 2, MPI_UINT64_T, MPI_SUM, m_ctrl, &m_wave_req),
          "MPI_Iallreduce (quiescence wave)");
    ++m_waves_this_call;
    m_wave_started = true;
    return 0;
  }
  int flag = 0;
  MPI_Test(&m_wave_req, &flag, MPI_STATUS_IGNORE);
  if (flag == 0) return 0;
  m_wave_req = MPI_REQUEST_NULL;
  m_next_wave = m_now + m_wave_pace;
  m_rounds.fetch_add(1, std::memory_order_relaxed);
  if (m_detector.on_wave({m_wave_global[0], m_wave_global[1]})) {
    m_quiesce_wanted.store(false, std::memory_order_relaxed);
    m_waves_this_call = 0;
    {
      std::lock_guard lock(m_done_m);
      m_epoch.fetch_add(1, std::memory_order_release);  // release: pairs with the waiter's acquire
    }
    m_done_cv.notify_all();
  }
  return 1;
}

// Every item this rank posted, ever: the outboxes' counts, read after m_done
// was read. Relaxed is enough: a finished item's posts were counted (by the
// thread that posted them) before that thread's seq_cst increment of
// m_done, so the load that sees the increment makes the counts visible
// here; and an item this rank has sent went out under the MPI lock, which
// this pass holds, after it was counted.
std::uint64_t bridge::items_sent() {
  std::uint64_t n = 0;
  // acquire: pairs with adopt_outbox's release (a new outbox is seen whole).
  for (const outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr; ob = ob->next) {
    n += ob->posts.load(std::memory_order_relaxed);
  }
  return n;
}

void bridge::wait_quiescent() {
  m_quiesce_calls.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t epoch = m_epoch.load(std::memory_order_acquire);
  if (m_mode == progress_mode::caller) {
    if (!owner_here()) {
      throw usage_error("strata::mpi: under progress=caller, wait_quiescent runs on the session's thread");
    }
    m_detector.begin();
    m_quiesce_wanted.store(true, std::memory_order_release);
    while (m_epoch.load(std::memory_order_acquire) == epoch) {
      if (pass() == 0) sched_yield();  // let the workers run what is in flight
    }
    return;
  }
  if (m_mode == progress_mode::worker && owner_here()) {
    // Its passes run between its tasks: a task that waits here would stop
    // them, and the items in flight that it would run.
    throw usage_error("strata::mpi: under progress=worker, wait_quiescent runs outside the comm worker (worker " +
                      std::to_string(m_comm->index) + "): call it from the thread that made the session");
  }
  m_detector.begin();  // the owner reads it only once m_quiesce_wanted is set (release below)
  m_quiesce_wanted.store(true, std::memory_order_release);  // release: publishes begin() to the owner
  wake_owner();
  std::unique_lock lock(m_done_m);
  m_done_cv.wait(lock, [&] { return m_epoch.load(std::memory_order_acquire) != epoch; });
}

// ---- The owner --------------------------------------------------------------

std::size_t bridge::pass() {
  // Re-entry (an inline handler that posts past the pending cap, a reply
  // sink that calls back in) would nest MPI calls of one pass inside
  // another: refused; the outer pass goes on.
  if (in_pass_here()) return 0;  // thread-local: a helper's pass on another thread is no re-entry
  std::lock_guard lock(m_mpi);
  return pass_locked(false);
}

void bridge::help_begin() noexcept { m_helpers.fetch_add(1, std::memory_order_relaxed); }  // relaxed: a hint

// The owner sleeps up to a millisecond while a thread helps, and the
// helper leaving does not wake it unless something needs it: the helper's
// reply is late (it gives up), another reply is awaited, a send is in
// flight or a buffer is open. seq_cst: the decrement before wake_owner's
// load of m_sleeping, against the progress thread's store of m_sleeping,
// fence, load of m_helpers. This thread's next post goes at once on an
// idle link (mark_after_help): a thread that waited for a reply usually
// sends the next request, and an open buffer would need the owner.
void bridge::help_end(bool satisfied) noexcept {
  m_helpers.fetch_sub(1, std::memory_order_seq_cst);
  mark_after_help();
  bool needed = !satisfied || m_awaited.load(std::memory_order_seq_cst) != 0 ||
                m_pending_bytes.load(std::memory_order_seq_cst) != 0;
  for (outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr && !needed; ob = ob->next) {
    needed = ob->has_open.load(std::memory_order_seq_cst);
  }
  if (needed) wake_owner();
}

std::size_t bridge::help() {
  if (in_pass_here()) return 0;  // from an inline handler: the pass it runs in goes on
  std::unique_lock lock(m_mpi, std::try_to_lock);
  if (!lock.owns_lock()) return 0;  // the owner (or another helper) is in a pass now
  return pass_locked(true);
}

// Under m_mpi. A helper's pass leaves m_seen_posted (the progress thread's
// sleep test reads it outside m_mpi) to the progress thread.
std::size_t bridge::pass_locked(bool helper) {
  const pass_scope scope(this);  // what in_pass_here() reads
  // The pass's one reading of the clock (a reading is a tenth of a pass
  // without traffic): the times the pass records (a
  // buffer received, a send started, the owner's look at the outboxes, the
  // peer check) are all its start.
  m_now = clock::now();
  if (!helper) m_seen_posted = m_posted.load();
  m_owner_posted = false;
  std::size_t n = test_receives();
  n += probe_large();
  m_pass_received = n;
  n += test_sends();
  // What inline handlers posted during this pass (replies, forwards): the
  // thread running the pass is their producer and it is done producing for
  // this pass, so its own outbox is sealed; the others get the routine look
  // (forcing them all sealed other threads' buffers early and moved their
  // outboxes' lines on every pass that answered a request).
  if (m_owner_posted) {
    if (outbox* ob = find_my_outbox()) n += seal_outbox(*ob, true, {});
  }
  n += seal_due(false);
  // This rank's own buffers count as received: the owner alone runs them,
  // so the comm worker stays hot while a thread streams them.
  const std::size_t ran_self = run_self(k_self_per_pass);
  m_pass_received += ran_self;
  n += ran_self;
  n += start_sends();
  // A completed wave is progress for the caller (progress=caller loops on
  // pass()) but not traffic: it must not keep the progress thread spinning.
  m_last_pass_waves = step_quiescence();
  if (m_now >= m_next_peer_check) check_peers(m_now);
  return n;
}

// Heartbeats and the deadline (config::heartbeat_ms, deadline_ms), every
// tenth of a heartbeat.
void bridge::check_peers(clock::time_point now) {
  const auto beat = std::chrono::milliseconds(m_cfg.heartbeat_ms);
  m_next_peer_check = now + beat / 10;
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    lane& l = *m_lanes[static_cast<std::size_t>(d)];
    if (m_departed[static_cast<std::size_t>(d)].flag.load(std::memory_order_relaxed)) continue;
    if (now - l.last_sent >= beat && !l.has_sealed.load(std::memory_order_relaxed)) {
      // An empty buffer: it takes a sequence number like any other, so it
      // is checked and ordered like any other.
      queue_bare(d, nullptr);
    }
    if (!m_deadline_on) continue;
    const std::int64_t heard = l.last_heard_ns.load(std::memory_order_relaxed);
    const auto since = heard < 0 ? m_started : m_started + std::chrono::nanoseconds(heard);
    if (now - since > std::chrono::milliseconds(m_cfg.deadline_ms)) silent_peer(d, heard, now);
  }
}

// A peer silent past the deadline: it died (kill -9, a node lost) or was
// stopped. Without ULFM nothing can recover the job; fail fast and say so.
void bridge::silent_peer(int peer, std::int64_t heard_ns, clock::time_point now) {
  const double up = std::chrono::duration<double>(now - m_started).count();
  const double silent = heard_ns < 0 ? up : up - 1e-9 * static_cast<double>(heard_ns);
  const auto wall = std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                           std::chrono::duration<double>(silent));
  const std::time_t t = std::chrono::system_clock::to_time_t(wall);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%H:%M:%S UTC", &tm);
  std::fprintf(stderr,
               "strata::mpi: rank %d: rank %d has been silent for %.1f s (%s %s; deadline %u ms, "
               "STRATA_MPI_DEADLINE_MS): it died or was stopped; exiting with status 75\n",
               m_rank, peer, silent, heard_ns < 0 ? "never heard since the session started at" : "last heard at", when,
               m_cfg.deadline_ms);
  std::fflush(stderr);
  std::_Exit(75);
}

// Tells every peer this rank is leaving (so its silence is not a failure,
// and what it still asks of this rank fails at once), then lets the
// progress drain the buffers for up to two seconds.
void bridge::post_goodbyes() {
  seal_due(true);  // what the threads posted goes first
  for (int d = 0; d < m_size; ++d) {
    if (d == m_rank) continue;
    const handler bye = handler::goodbye;
    queue_bare(d, &bye);
  }
  wake_owner();
  const auto until = clock::now() + std::chrono::seconds(2);
  while (m_pending_bytes.load(std::memory_order_relaxed) != 0 && clock::now() < until) {
    if (m_mode == progress_mode::caller) {
      pass();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
}

void bridge::progress_thread() {
  unsigned idle = 0;
  auto sleep_for = std::chrono::microseconds(50);
  while (!m_stop.load(std::memory_order_relaxed)) {
    if (m_helpers.load(std::memory_order_relaxed) != 0) {  // relaxed: re-read after the fence below
      // A thread waiting in get() makes the passes (help_wait): this one
      // steps aside, as the comm worker does (comm_worker.hpp, Helpers),
      // until the helper's work is done or it gives up, a millisecond at most.
      const long t = k_helper_wait_ns;
      std::unique_lock lock(m_sleep_m);
      m_wait_until.store(clock::now().time_since_epoch().count() + t, std::memory_order_seq_cst);  // nudge_open
      m_sleeping.store(true, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // m_sleeping before m_helpers (help_end's wake)
      if (m_helpers.load(std::memory_order_relaxed) != 0 && !m_stop.load()) {
        m_sleep_cv.wait_for(lock, std::chrono::nanoseconds(t));
      }
      m_sleeping.store(false, std::memory_order_relaxed);
      idle = 100;
      continue;
    }
    if (pass() != 0) {
      idle = 0;
      sleep_for = std::chrono::microseconds(50);
      continue;
    }
    ++idle;
    if (idle < 200) continue;  // spin: a reply or the next message is usually a few µs away
    if (idle < 2000) {
      sched_yield();
      continue;
    }
    std::unique_lock lock(m_sleep_m);
    // The wait's end, for nudge_open, published before the hints are read.
    m_wait_until.store(
        clock::now().time_since_epoch().count() + std::chrono::duration_cast<clock::duration>(sleep_for).count(),
        std::memory_order_seq_cst);
    m_sleeping.store(true, std::memory_order_relaxed);
    // seq_cst: m_sleeping before the hints (Wake-ups in bridge.hpp; the
    // producers fence between their hint and their load of m_sleeping).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    bool open = false;
    const bool sealed = waiting_work(&open);
    const std::uint64_t posted = m_posted.load();
    if (posted == m_seen_posted && !m_stop.load() && !sealed) {
      if (open) {
        // An open buffer: its producer's fast appends wake no one, so the
        // next look comes within a look's interval (Fast appends).
        m_sleep_cv.wait_for(lock, k_open_wait);
      } else {
        m_sleep_cv.wait_for(lock, sleep_for);
        sleep_for = std::min<std::chrono::microseconds>(sleep_for * 2, std::chrono::milliseconds(1));
      }
    }
    m_sleeping.store(false, std::memory_order_relaxed);
    idle = 100;  // back to a short spin
  }
}

// ---- The comm worker (progress=worker: comm_worker.hpp) ------------------------

namespace {
// After a pass that did something, the comm worker keeps passing for this
// long and for this many passes, whichever ends later, before it parks
// (the progress thread's 200 spinning passes, about). Time alone was not
// enough: a worker preempted inside the window (ranks sharing cores with
// other threads) found it expired when it ran again and parked, and each
// request then waited out a timed sleep of up to a millisecond, where raw
// MPI, which spins, answers within its next time slice.
constexpr auto k_hot_window = std::chrono::microseconds(100);
constexpr unsigned k_hot_passes = 256;
// Its idle wait: 50 µs, doubling to 1 ms while passes find nothing (the
// progress thread's sleep), and 50 µs while a reply is awaited.
constexpr long k_idle_wait_min_ns = 50'000;
constexpr long k_idle_wait_max_ns = 1'000'000;
// Its idle wait while a send is in flight or a producer's buffer is open.
constexpr long k_idle_wait_busy_ns = 20'000;
// While the comm worker is awake, and until k_active_window after the hot
// window, the longest time between its passes.
constexpr auto k_pass_interval = std::chrono::microseconds(20);
constexpr auto k_active_window = std::chrono::milliseconds(1);
// Empty passes of an idle comm worker before each further one yields.
constexpr unsigned k_spin_passes = 64;
}  // namespace

std::size_t bridge::worker_pass(bool idle) noexcept {
  // A pass throws only when MPI fails or memory runs out; the progress
  // thread then ends the process too (an exception leaving it terminates).
  // Here the worker must not unwind: say so and end the job.
  try {
    return worker_pass_inner(idle);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata::mpi: rank %d: the comm worker's pass failed: %s\n", m_rank, e.what());
  } catch (...) {
    std::fprintf(stderr, "strata::mpi: rank %d: the comm worker's pass failed\n", m_rank);
  }
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 70);
  return 0;
}

std::size_t bridge::worker_pass_inner(bool idle) {
  // A poll that makes no pass still counts against the hot window's passes:
  // while serialized() holds the MPI lock (the application's own MPI calls)
  // the worker would otherwise spin on failed tries for as long as it held.
  if (in_pass_here()) {  // a wait inside an inline handler of this worker's pass
    if (m_hot_passes != 0) --m_hot_passes;
    return 0;
  }
  std::unique_lock lock(m_mpi, std::try_to_lock);
  if (!lock.owns_lock()) {  // a helper's pass, or serialized(): the worker runs tasks meanwhile
    if (m_hot_passes != 0) --m_hot_passes;
    return 0;
  }
  std::size_t sealed = 0;
  if (idle) {
    // What this worker posted (an actor's answer, a task's post_at) goes now:
    // it has nothing left to run, so it is done producing.
    if (outbox* ob = find_my_outbox(); ob != nullptr && ob->has_open.load(std::memory_order_relaxed)) {
      sealed = seal_outbox(*ob, true, {});  // forced: no time needed
    }
  }
  m_wave_started = false;
  const std::size_t n = pass_locked(false) + sealed;
  m_last_pass = m_now;
  // Hot after what brings more traffic from other ranks: a receive, a wave,
  // or a send while a reply is awaited. A send that only completed, or a
  // buffer this pass sealed for a producer, does not: while a producer
  // streams, its own thread sends (kick_sends), and a comm worker spinning
  // beside it would take a core from it or from the receiving rank.
  const bool traffic = m_pass_received != 0 || m_last_pass_waves != 0 || m_wave_started || sealed != 0 ||
                       (n != 0 && m_awaited.load(std::memory_order_relaxed) != 0);
  if (traffic) {
    m_hot_passes = k_hot_passes;
    m_hot_until = m_now + k_hot_window;
    m_idle_wait_ns = k_idle_wait_min_ns;
    m_empty_passes = 0;
  } else if (m_hot_passes != 0) {
    --m_hot_passes;
    if (m_hot_passes == 0) m_hot_until = std::max(m_hot_until, m_now);
  }
  if (!traffic && idle && ++m_empty_passes >= k_spin_passes) {
    // Spinning on passes (ready() holds while a buffer waits or the window
    // is hot) must not keep the core for a whole time slice from the
    // threads that would make the progress it waits for: the peer rank's
    // when ranks share cores, or a worker of this rank that is to answer.
    lock.unlock();
    sched_yield();
  }
  return n;
}

bool bridge::worker_ready(bool parking) noexcept {
  // seq_cst loads: the parker's re-check after its seq_cst announce, against
  // the producers' store, fence, load of `sleeping` (comm_worker.hpp).
  if (m_posted.load(std::memory_order_seq_cst) != m_seen_posted) return true;
  // A sealed buffer that no one has started sending. (One in flight, or an
  // open one, is looked at after a short idle wait: worker_idle_timeout_ns.)
  for (const auto& l : m_lanes) {
    if (l->has_sealed.load(std::memory_order_seq_cst)) return true;
  }
  // A pass is due every k_pass_interval: while the worker spins searching
  // for tasks (tiered stealing's spin phase, thousands of rounds with
  // yields) only ready() is asked, and MPI traffic cannot make it true.
  // Without this a request to an idle rank waited out the search: 2.5-4 ms
  // a round trip with the asking task on another worker.
  // Only within the active window after the last pass that did something
  // (an idle rank's worker must park), and not in the parking re-check,
  // which comes after a spin (the worker would never park).
  // A thread waiting in get() makes the passes (help_begin): spinning
  // beside it would take a core from it or from the peer rank.
  if (m_helpers.load(std::memory_order_relaxed) != 0) return false;  // relaxed: a hint
  if (m_hot_passes != 0) return true;
  const auto now = clock::now();
  if (now < m_hot_until) return true;
  return !parking && now < m_hot_until + k_active_window && now - m_last_pass >= k_pass_interval;
}

long bridge::worker_idle_timeout_ns() noexcept {
  // The wait without an open buffer or a send: 50 µs while a reply is
  // awaited here (it comes by MPI, which cannot wake the worker), else the
  // back-off; a millisecond while a helper makes the passes (comm_worker.hpp).
  const bool awaited = m_awaited.load(std::memory_order_relaxed) != 0;  // relaxed: a hint
  long quiet = awaited || m_idle_wait_ns == 0 ? k_idle_wait_min_ns : m_idle_wait_ns;
  if (m_helpers.load(std::memory_order_relaxed) != 0) quiet = k_helper_wait_ns;  // relaxed: a hint
  // Its end, published before the hints are read (seq_cst, both), for the
  // producers that open a buffer (nudge_open; comm_worker.hpp, Opened
  // buffers): one that read a stale end stored its hint before its fence,
  // so the loads below see it.
  const std::int64_t now = clock::now().time_since_epoch().count();
  m_wait_until.store(now + quiet, std::memory_order_seq_cst);
  // A send in flight, or an open buffer: looked at again soon (the send
  // needs MPI calls to complete, the buffer is due within flush_delay).
  // seq_cst: this runs after the park announce, so a producer whose
  // notify_worker missed `sleeping` stored has_open before its fence and
  // is seen here (comm_worker.hpp, No lost wake-up).
  bool busy = m_pending_bytes.load(std::memory_order_seq_cst) != 0;
  for (outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr && !busy; ob = ob->next) {
    busy = ob->has_open.load(std::memory_order_seq_cst);
  }
  if (busy) {
    // Shorter than the end published: a producer that read that one wakes
    // this worker for nothing, no more.
    m_wait_until.store(now + k_idle_wait_busy_ns, std::memory_order_relaxed);
    return k_idle_wait_busy_ns;
  }
  if (!awaited) m_idle_wait_ns = std::min(2 * quiet, k_idle_wait_max_ns);
  return quiet;
}

session_stats bridge::stats() const {
  session_stats s;
  s.rank = m_rank;
  s.size = m_size;
  // Built, then moved in: GCC 12 warns (-Wrestrict, a false positive) on
  // the assignment from a literal here.
  s.thread_level = std::string(level_name(m_level));
  s.progress = std::string(m_mode == progress_mode::thread ? "thread"
                           : m_mode == progress_mode::worker ? "worker"
                                                             : "caller");
  s.comm_worker = m_comm != nullptr ? static_cast<int>(m_comm->index) : -1;
  const auto now = clock::now();
  std::vector<std::uint64_t> items(static_cast<std::size_t>(m_size)), bytes(items.size());
  for (const outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr; ob = ob->next) {
    s.outboxes++;
    for (std::size_t r = 0; r < items.size(); ++r) {
      items[r] += ob->slots[r].items_sent.load(std::memory_order_relaxed);  // relaxed: counters
      bytes[r] += ob->slots[r].bytes_sent.load(std::memory_order_relaxed);
    }
  }
  for (int r = 0; r < m_size; ++r) {
    lane& l = *m_lanes[static_cast<std::size_t>(r)];
    std::lock_guard lock(l.m);
    peer_stats p = l.st;
    p.items_sent = items[static_cast<std::size_t>(r)];
    p.bytes_sent = bytes[static_cast<std::size_t>(r)];
    if (r == m_rank) {  // an item for this rank never crosses MPI: received as it is sent
      p.items_received = p.items_sent;
      p.bytes_received = p.bytes_sent;
    }
    const std::int64_t heard = l.last_heard_ns.load(std::memory_order_relaxed);
    p.last_heard_s =
        heard < 0 ? -1.0 : std::chrono::duration<double>(now - m_started).count() - static_cast<double>(heard) * 1e-9;
    s.peers.push_back(p);
  }
  for (std::size_t i = 0; i < k_reject_reasons; ++i) {
    s.rejects.emplace_back(std::string(reject_name(static_cast<reject>(i))),
                           m_rejects[i].load(std::memory_order_relaxed));
  }
  s.rejects.emplace_back("late_epoch", m_late_epoch.load(std::memory_order_relaxed));
  s.termination_rounds = m_rounds.load(std::memory_order_relaxed);
  s.quiescence_calls = m_quiesce_calls.load(std::memory_order_relaxed);
  s.tasks_run = m_tasks_run.load(std::memory_order_relaxed);
  s.tasks_failed = m_task_errors.load(std::memory_order_relaxed);
  // acquire: pairs with adopt_outbox's release (a new outbox is seen whole).
  for (const outbox* ob = m_outboxes.load(std::memory_order_acquire); ob != nullptr; ob = ob->next) {
    s.tasks_run += ob->inline_runs.load(std::memory_order_relaxed);
  }
  s.actor_messages = m_actor_messages.load(std::memory_order_relaxed);
  s.producer_waits = m_producer_waits.load(std::memory_order_relaxed);
  s.slots_retired = m_slots_retired.load(std::memory_order_relaxed);  // relaxed: a counter
  return s;
}

}  // namespace strata::mpi::detail
