// worker_deque / stealer: a work-stealing deque whose owner pays no fence on
// the common path.
//
// The problem. A Chase-Lev deque (Chase and Lev, SPAA 2005; the C11 version
// of Le, Pop, Cohen and Zappa Nardelli, PPoPP 2013) makes the owner's pop
// race with thieves on every call: pop stores bottom-1, then needs a
// StoreLoad fence before it reads top. That fence (~20 cycles) costs more
// than the rest of a spawn/pop pair together.
//
// The protocol. After Lace (van Dijk and van de Pol, "Lace: non-blocking
// split deque for work-stealing", Euro-Par 2014 workshops) the deque is split
// at an index `split`:
//
//     top ........ split ........ bottom
//     [ shared: thieves steal ) [ private: owner only )
//
// Thieves only ever take elements below split, so the owner pushes and pops
// the private part with plain operations: no fence, no read-modify-write.
// When thieves find the shared part empty they raise `m_request`; the owner
// sees it on its next push (or when the worker loop polls) and publishes
// half of its private part by moving split up with a release store. When
// the owner's private part is empty and it pops again, it takes back the
// youngest shared element with exactly Le et al.'s `take`, with split in the
// role of their bottom: store split-1, seq_cst fence, read top, and a CAS on
// top only when one element is left. That fence is paid only after work was
// shared, i.e. when a thief wanted it.
//
// Indices are signed 64-bit and only grow (no overflow in practice); slots
// are atomics (a thief may read a slot the owner is rewriting after a
// wrap-around, and discards it when its CAS fails); the buffer grows by
// doubling and retired buffers stay on an owner-side list until the deque
// dies, because a slow thief may still read an old one. T must be trivially
// copyable (the runtime stores task pointers).
//
// Rejected: a plain Chase-Lev (a fence per pop: bench/micro compares them), a
// packed (top, split) word CAS'd by both sides as in Lace (32-bit indices
// that must be reset, and a CAS on every take-back), and a mutex-protected
// deque (a lock per pop).
//
// Steal-half across NUMA nodes is a sequence of single steals (each its own
// CAS on top): a multi-element CAS would race with the owner's take-back.
//
// Invariants (owner's view, checked by STRATA_ASSERT in dev builds):
//   top_cache <= split <= bottom,  bottom - top_cache <= capacity,
// where top_cache is the owner's lower bound of top (top only grows).
//
// Under STRATA_TSAN the stand-alone fences become seq_cst operations on the
// indices (TSAN does not model fences).
#pragma once

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include <strata/config.hpp>
#include <strata/numa_alloc/memory.hpp>
#include <strata/runtime/ext/assert.hpp>

namespace strata {

enum class steal_status { success, empty, lost };

template <class T>
struct [[nodiscard]] steal_result {
  steal_status status = steal_status::empty;
  T value{};
  explicit operator bool() const noexcept { return status == steal_status::success; }
};

namespace detail {

inline constexpr bool k_tsan = STRATA_TSAN != 0;

// A ring of 2^k atomic slots in memory of the owner's placement (its NUMA
// node when the worker is pinned).
template <class T>
class deque_buffer {
 public:
  deque_buffer(std::int64_t capacity, memory_placement where) : m_mask(capacity - 1) {
    void* mem = numa_allocate(bytes(), where, alignof(std::atomic<T>));
    // Constructed one by one, not `= ::new (mem) std::atomic<T>[n]`: cppcheck 2.10 cannot parse
    // that (internalAstError) and would skip every file that includes this one.
    m_slots = static_cast<std::atomic<T>*>(mem);
    std::uninitialized_default_construct_n(m_slots, static_cast<std::size_t>(capacity));
  }
  deque_buffer(const deque_buffer&) = delete;
  deque_buffer& operator=(const deque_buffer&) = delete;
  ~deque_buffer() {
    static_assert(std::is_trivially_destructible_v<std::atomic<T>>, "slots are released without destructors");
    numa_deallocate(m_slots, bytes(), alignof(std::atomic<T>));
  }
  std::int64_t capacity() const noexcept { return m_mask + 1; }
  std::int64_t mask() const noexcept { return m_mask; }
  std::atomic<T>* slots() const noexcept { return m_slots; }
  // relaxed: slot contents are published by the release store of split (or
  // are private to the owner); a thief's racy read is discarded by its CAS.
  T load(std::int64_t i) const noexcept { return m_slots[i & m_mask].load(std::memory_order_relaxed); }
  void store(std::int64_t i, T v) noexcept { m_slots[i & m_mask].store(v, std::memory_order_relaxed); }  // relaxed: as load

 private:
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(m_mask + 1) * sizeof(std::atomic<T>); }
  std::int64_t m_mask;
  std::atomic<T>* m_slots;
};

// State shared by the owner and its thieves.
template <class T>
struct deque_shared {
  // Written by thieves (CAS) and by the owner's take-back (CAS); read by both.
  alignas(k_destructive_size) std::atomic<std::int64_t> top{0};
  // Written by the owner only (publish: release; take-back: relaxed + fence);
  // read by thieves (acquire).
  alignas(k_destructive_size) std::atomic<std::int64_t> split{0};
  // Written by the owner on growth (release); read by thieves (acquire).
  std::atomic<deque_buffer<T>*> buffer{nullptr};
  // Raised by thieves that found the shared part empty (relaxed: a hint, the
  // owner answers on its next push or poll); cleared by the owner.
  alignas(k_destructive_size) std::atomic<bool> request{false};
};

}  // namespace detail

template <class T>
class stealer;

// The owner's handle: push, pop, publish. Not copyable; one thread only.
template <class T>
class worker_deque {
  static_assert(std::is_trivially_copyable_v<T>, "worker_deque holds trivially copyable values (task pointers)");

 public:
  // Buffers (the first and every grown one) are allocated with `where`.
  explicit worker_deque(std::int64_t initial_capacity = 1024, memory_placement where = memory_placement::unbound())
      : m_where(where), m_shared(std::make_shared<detail::deque_shared<T>>()), m_request(&m_shared->request) {
    std::int64_t cap = 2;
    while (cap < initial_capacity) cap *= 2;
    m_garbage.reserve(64);  // 2^64 elements would be needed to outgrow this
    m_buffer = new detail::deque_buffer<T>(cap, m_where);
    m_slots = m_buffer->slots();
    m_mask = m_buffer->mask();
    m_garbage.emplace_back(m_buffer);
    m_shared->buffer.store(m_buffer, std::memory_order_release);  // release: pairs with the acquire in steal
  }
  worker_deque(const worker_deque&) = delete;
  worker_deque& operator=(const worker_deque&) = delete;

  stealer<T> make_stealer() const noexcept { return stealer<T>(m_shared); }

  // Makes room for one more push now, so that the next push cannot grow:
  // the one step of a spawn that can fail for want of memory. Throws what
  // numa_allocate throws (numa_bad_alloc) and then changes nothing. The
  // spawn paths call it before they take a frame (spawn_frame).
  void reserve_one() {
    if (m_bottom - m_top_cache > m_mask) {
      // acquire: pairs with thieves' CAS on top, as in push.
      m_top_cache = m_shared->top.load(std::memory_order_acquire);
      if (m_bottom - m_top_cache > m_mask) grow();
    }
  }

  // Private push: no fence, no atomic read-modify-write. Grows when full,
  // and a refused allocation there ends the process (noexcept): a push
  // that may find the deque full comes after reserve_one. (Pushes that move
  // stolen tasks onto the thief's deque find it empty: they never grow.)
  void push(T v) noexcept {
    if (m_bottom - m_top_cache > m_mask) {
      // acquire: pairs with thieves' CAS on top; tells how much room they freed.
      m_top_cache = m_shared->top.load(std::memory_order_acquire);
      if (m_bottom - m_top_cache > m_mask) grow();
    }
    // relaxed: published later by the release store of split (see publish).
    m_slots[m_bottom & m_mask].store(v, std::memory_order_relaxed);
    ++m_bottom;
    STRATA_ASSERT(m_bottom - m_top_cache <= m_mask + 1, "a deque holds at most its capacity");
  }

  // Pops the youngest element into out: private part without
  // synchronisation, else takes back the youngest shared element (Le et
  // al.'s take on split). False when the deque is empty or the last shared
  // element was lost to a thief. (A bool and an out-parameter, not an
  // optional: GCC builds the optional through memory and stalls store
  // forwarding on the hottest path of the runtime.)
  bool pop(T& out) noexcept {
    if (m_bottom > m_split) {
      --m_bottom;
      out = m_slots[m_bottom & m_mask].load(std::memory_order_relaxed);  // relaxed: private slot
      return true;
    }
    STRATA_ASSERT(m_bottom == m_split, "split <= bottom");
    return take_shared(out);
  }

  // The youngest private element, or nullptr (T must be a pointer): lets
  // the owner look before it pops, without touching shared state.
  T peek_private() const noexcept {
    if (m_bottom > m_split) return m_slots[(m_bottom - 1) & m_mask].load(std::memory_order_relaxed);  // relaxed: private slot
    return T{};
  }
  // Drops the youngest private element (owner only; after peek_private returned it).
  void drop_private() noexcept {
    STRATA_ASSERT(m_bottom > m_split, "drop_private drops a private element");
    --m_bottom;
  }

  // An upper bound of the elements in the deque, from owner-private values only.
  std::int64_t size_bound() const noexcept { return m_bottom - m_top_cache; }
  // The elements in the deque now (owner only): one acquire load of the
  // shared top (pairs with the thieves' CAS on it), which also refreshes
  // the owner's cached copy.
  std::int64_t size() noexcept {
    m_top_cache = m_shared->top.load(std::memory_order_acquire);
    return m_bottom - m_top_cache;
  }
  // Number of private elements (owner only).
  std::int64_t private_size() const noexcept { return m_bottom - m_split; }
  // True when a thief asked for work since the last publish.
  bool requested() const noexcept {
    // relaxed: a hint written by thieves (see deque_shared::request).
    return m_request->load(std::memory_order_relaxed);
  }

  // Moves split up so that half the private part (at least one element, the
  // oldest) becomes stealable. Returns how many were published.
  std::int64_t publish() noexcept {
    m_request->store(false, std::memory_order_relaxed);  // relaxed: hint (see request)
    const std::int64_t n = m_bottom - m_split;
    if (n <= 0) return 0;
    const std::int64_t k = (n + 1) / 2;
    m_split += k;
    STRATA_ASSERT(m_top_cache <= m_split && m_split <= m_bottom, "top <= split <= bottom after a publish");
    // release: publishes the slots below the new split and their tasks'
    // contents to thieves (pairs with the acquire load of split in steal).
    m_shared->split.store(m_split, std::memory_order_release);
    return k;
  }

  // Makes the whole private part stealable: for an owner that never pops
  // (an external lane's submitter, lanes.hpp).
  void publish_all() noexcept {
    m_split = m_bottom;
    // release: as in publish (pairs with the acquire load of split in steal).
    m_shared->split.store(m_split, std::memory_order_release);
  }

  std::int64_t capacity() const noexcept { return m_buffer->capacity(); }

 private:
  bool take_shared(T& out) noexcept {
    // top only grows, so top >= m_top_cache >= split means nothing is shared:
    // an empty deque is answered without the fence.
    if (m_split <= m_top_cache) return false;
    const std::int64_t b = m_split - 1;
    auto& sh = *m_shared;
    std::int64_t t;
    if constexpr (detail::k_tsan) {
      // TSAN build: seq_cst store then seq_cst load give the StoreLoad order
      // the fence gives below (pairs with the seq_cst loads in steal).
      sh.split.store(b, std::memory_order_seq_cst);
      t = sh.top.load(std::memory_order_seq_cst);
    } else {
      // release: a thief that reads this smaller split must still see the
      // slots below it (since C++20 a relaxed store would not continue the
      // release sequence of publish()).
      sh.split.store(b, std::memory_order_release);
      // seq_cst fence: closes the StoreLoad race between this store of split
      // and a thief's load of split after its load of top (pairs with the
      // fence in stealer::steal): either we see its increment of top or it
      // sees our smaller split.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      t = sh.top.load(std::memory_order_relaxed);  // relaxed: ordered by the fence above
    }
    bool got = false;
    if (t <= b) {
      out = m_buffer->load(b);
      got = true;
      if (t == b) {
        // Last shared element: race the thieves for it. seq_cst CAS: pairs
        // with their CAS on top.
        if (!sh.top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
          got = false;
        }
        m_split = b + 1;
        sh.split.store(m_split, std::memory_order_relaxed);  // relaxed: top == split, nothing to publish
        m_top_cache = b + 1;
        m_bottom = b + 1;
        return got;
      }
      m_split = b;
      m_bottom = b;
      m_top_cache = t;
      STRATA_ASSERT(m_top_cache <= m_split, "top <= split after a take-back");
      return true;
    }
    // Everything was stolen: restore split = top.
    m_split = b + 1;
    sh.split.store(m_split, std::memory_order_relaxed);  // relaxed: nothing below split remains
    m_top_cache = t;
    m_bottom = b + 1;
    return false;
  }

  // Strong guarantee: the allocation comes first; when it throws, nothing changed.
  void grow() {
    auto* bigger = new detail::deque_buffer<T>(m_buffer->capacity() * 2, m_where);
    for (std::int64_t i = m_top_cache; i < m_bottom; ++i) bigger->store(i, m_buffer->load(i));
    m_garbage.emplace_back(bigger);  // capacity reserved: never reallocates in practice
    m_buffer = bigger;
    m_slots = bigger->slots();
    m_mask = bigger->mask();
    // release: a thief that loads this pointer sees the copied slots.
    m_shared->buffer.store(bigger, std::memory_order_release);
  }

  // Owner-private state.
  std::atomic<T>* m_slots = nullptr;  // m_buffer's slots and mask, cached: one load less per push/pop
  std::int64_t m_mask = 0;
  std::int64_t m_bottom = 0;     // next push index
  std::int64_t m_split = 0;      // owner's copy of split
  std::int64_t m_top_cache = 0;  // a lower bound of top, refreshed when the buffer looks full
  detail::deque_buffer<T>* m_buffer = nullptr;
  memory_placement m_where;
  std::vector<std::unique_ptr<detail::deque_buffer<T>>> m_garbage;  // current and retired buffers
  std::shared_ptr<detail::deque_shared<T>> m_shared;
  std::atomic<bool>* m_request;  // &m_shared->request, cached: one load less per check
};

// A thief's handle: copyable, steal only.
template <class T>
class stealer {
 public:
  stealer() = default;

  steal_result<T> steal() const noexcept {
    auto& sh = *m_shared;
    std::int64_t t;
    std::int64_t s;
    if constexpr (detail::k_tsan) {
      // TSAN build: seq_cst loads instead of the fence (pair with take_shared).
      t = sh.top.load(std::memory_order_seq_cst);
      s = sh.split.load(std::memory_order_seq_cst);
    } else {
      // acquire: pairs with the CAS of other thieves and the owner's take-back.
      t = sh.top.load(std::memory_order_acquire);
      // seq_cst fence: pairs with the fence in worker_deque::take_shared
      // (StoreLoad between the owner's store of split and its load of top).
      std::atomic_thread_fence(std::memory_order_seq_cst);
      // acquire: pairs with the release store in publish (slots and tasks visible).
      s = sh.split.load(std::memory_order_acquire);
    }
    if (t >= s) {
      // Shared part empty: ask the owner to publish (store only when needed,
      // so idle thieves do not bounce the line). relaxed: a hint.
      if (!sh.request.load(std::memory_order_relaxed)) sh.request.store(true, std::memory_order_relaxed);
      return {steal_status::empty, T{}};
    }
    // acquire: pairs with the release store of a grown buffer.
    const T v = sh.buffer.load(std::memory_order_acquire)->load(t);
    // seq_cst CAS: pairs with other thieves' CAS and the owner's take-back CAS.
    if (!sh.top.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) {
      return {steal_status::lost, T{}};
    }
    STRATA_ASSERT(t < s, "a thief takes only below split");
    return {steal_status::success, v};
  }

  // Shared elements a thief could take now (a racy estimate, for steal-half).
  std::int64_t shared_size() const noexcept {
    const auto t = m_shared->top.load(std::memory_order_relaxed);    // relaxed: estimate only
    const auto s = m_shared->split.load(std::memory_order_relaxed);  // relaxed: estimate only
    return s > t ? s - t : 0;
  }

 private:
  friend class worker_deque<T>;
  explicit stealer(std::shared_ptr<detail::deque_shared<T>> s) : m_shared(std::move(s)) {}
  std::shared_ptr<detail::deque_shared<T>> m_shared;
};

}  // namespace strata
