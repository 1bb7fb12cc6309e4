// arena: chunks, runs, central lists, thread caches (design in arena.hpp).
#include "arena.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <strata/topology/ext/fault.hpp>

#include "numa_system.hpp"

namespace strata::numa_detail {

// A thread's free lists, one per (slot, class), and its counters per slot.
// Used by its own thread only; enrolled with the arena set so that stats()
// can read the counters.
class thread_cache {
 public:
  explicit thread_cache(arena_set& a)
      : m_arena(a),
        m_lists(std::make_unique<list[]>(a.slots() * k_classes)),
        m_counters(std::make_unique<slot_counters[]>(a.slots())) {
    home = a.node_slot(current_node());
    a.enrol(this);
  }
  thread_cache(const thread_cache&) = delete;
  thread_cache& operator=(const thread_cache&) = delete;
  ~thread_cache() {
    for (std::size_t s = 0; s < m_arena.slots(); ++s) {
      for (int c = 0; c < k_classes; ++c) spill(s, c, m_lists[s * k_classes + c].count);
    }
    m_arena.retire(this);
  }

  void* allocate(std::size_t slot, int cls) {
    list& l = m_lists[slot * k_classes + cls];
    if (l.head == nullptr) refill(slot, cls);
    free_block* b = l.head;
    l.head = b->next;
    --l.count;
    count_alloc(slot, cls);
    return b;
  }

  void deallocate(void* p, std::size_t slot, int cls) noexcept {
    slot_counters& k = m_counters[slot];
    add(k.in_use, -static_cast<std::int64_t>(class_bytes(cls)));
    add(k.frees, 1);
    const bool other_node = slot != home && slot < m_arena.interleaved_slot();
    auto* b = static_cast<free_block*>(p);
    if (other_node) {
      // Back to the owning node's central list: this thread would hand it
      // to its own node's allocations otherwise.
      add(k.remote_frees, 1);
      b->next = nullptr;
      m_arena.give_back(slot, cls, b, b, 1);
      return;
    }
    list& l = m_lists[slot * k_classes + cls];
    b->next = l.head;
    l.head = b;
    if (++l.count > capacity(cls)) spill(slot, cls, l.count / 2);
  }

  const slot_counters& counters(std::size_t slot) const noexcept { return m_counters[slot]; }
  slot_counters& counters(std::size_t slot) noexcept { return m_counters[slot]; }

  std::size_t home = 0;  // slot of the node this thread ran on when its cache was made

 private:
  struct list {
    free_block* head = nullptr;
    std::size_t count = 0;
  };

  // Single writer: load + store (relaxed: racy readers only want a snapshot).
  template <class A, class N>
  static void add(A& a, N n) noexcept {
    a.store(a.load(std::memory_order_relaxed) + static_cast<typename A::value_type>(n), std::memory_order_relaxed);
  }
  static std::size_t capacity(int cls) noexcept {
    const std::size_t n = (std::size_t{128} << 10) / class_bytes(cls);
    return n < 4 ? 4 : (n > 256 ? 256 : n);
  }
  static std::size_t batch(int cls) noexcept {
    const std::size_t n = capacity(cls) / 4;
    return n < 2 ? 2 : n;
  }

  void count_alloc(std::size_t slot, int cls) noexcept {
    slot_counters& k = m_counters[slot];
    add(k.in_use, static_cast<std::int64_t>(class_bytes(cls)));
    add(k.allocations, 1);
  }

  void refill(std::size_t slot, int cls) {
    free_block* got[256];
    const std::size_t n = m_arena.take_batch(slot, cls, got, batch(cls));
    list& l = m_lists[slot * k_classes + cls];
    for (std::size_t i = 0; i < n; ++i) {
      got[i]->next = l.head;
      l.head = got[i];
    }
    l.count += n;
  }

  // Moves n blocks of the list back to the central list.
  void spill(std::size_t slot, int cls, std::size_t n) noexcept {
    if (n == 0) return;
    list& l = m_lists[slot * k_classes + cls];
    free_block* head = l.head;
    free_block* tail = head;
    for (std::size_t i = 1; i < n; ++i) tail = tail->next;
    l.head = tail->next;
    l.count -= n;
    tail->next = nullptr;
    m_arena.give_back(slot, cls, head, tail, n);
  }

  arena_set& m_arena;
  std::unique_ptr<list[]> m_lists;
  std::unique_ptr<slot_counters[]> m_counters;
};

namespace {

// The calling thread's cache; nullptr while the thread exits (its
// thread_local destructors may still free memory: those go to the central
// lists directly).
thread_local thread_cache* t_cache = nullptr;
thread_local bool t_cache_gone = false;

struct cache_holder {
  thread_cache* cache = nullptr;
  ~cache_holder() {
    t_cache_gone = true;
    t_cache = nullptr;
    delete cache;
  }
};

thread_cache* my_cache(arena_set& a) {
  if (t_cache != nullptr) return t_cache;
  if (t_cache_gone) return nullptr;
  thread_local cache_holder holder;
  holder.cache = new thread_cache(a);
  t_cache = holder.cache;
  return t_cache;
}

std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }

// Statistics counters touched by several threads (retired totals, mapped
// bytes): relaxed RMW, nothing is published through them.
void fetch_add(std::atomic<std::int64_t>& a, std::int64_t n) noexcept { a.fetch_add(n, std::memory_order_relaxed); }
void fetch_add(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept { a.fetch_add(n, std::memory_order_relaxed); }

}  // namespace

arena_set& arena_set::instance() {
  static arena_set* const a = new arena_set();  // never destroyed (see arena.hpp)
  return *a;
}

arena_set::arena_set() {
  const numa_system& s = system();
  const std::size_t nodes = static_cast<std::size_t>(s.max_node) + 1;
  for (std::size_t n = 0; n < nodes + 2; ++n) m_slots.push_back(std::make_unique<arena_slot>());
  for (std::size_t n = 0; n < nodes; ++n) m_slots[n]->where = memory_placement::on(numa_node{static_cast<int>(n)});
  m_slots[nodes]->where = memory_placement::interleaved();
  m_slots[nodes + 1]->where = memory_placement::unbound();
}

// Maps len bytes aligned to align (a power of two, >= page), binds them to
// the slot's policy before anything touches them.
char* arena_set::map_bound(std::size_t len, std::size_t align, std::size_t slot_index, std::size_t requested) {
  arena_slot& s = slot(slot_index);
  const std::size_t extra = align > k_page ? align : 0;
  if (const int e = fault::fail_here(fault::site::mmap); e != 0) throw numa_bad_alloc(s.where, requested, e);
  void* raw = mmap(nullptr, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) throw numa_bad_alloc(s.where, requested, errno);
  char* p = static_cast<char*>(raw);
  if (extra != 0) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    char* aligned = p + (round_up(at, align) - at);
    if (aligned != p) munmap(p, static_cast<std::size_t>(aligned - p));
    const std::size_t tail = static_cast<std::size_t>((p + len + extra) - (aligned + len));
    if (tail != 0) munmap(aligned + len, tail);
    p = aligned;
  }
  if (len >= k_chunk_bytes) madvise(p, len, MADV_HUGEPAGE);  // advice only: THP may be off
  const bool wants_binding = s.where.how() != memory_placement::kind::unbound;
  if (wants_binding) {
    if (system().binding) {
      if (const int err = bind_range(p, len, s.where); err == EPERM || err == ENOSYS) {
        // Refused after the start-up probe passed (a seccomp filter or
        // policy installed later): plain memory, as on a machine without binding.
        const std::string reason = std::string("mbind refused: ") + std::strerror(err);
        warn_no_binding_once(reason.c_str());
      } else if (err != 0) {
        munmap(p, len);
        throw numa_bad_alloc(s.where, requested, err);
      }
    } else {
      warn_no_binding_once();
    }
  }
  fetch_add(s.bytes_mapped, static_cast<std::uint64_t>(len));
  return p;
}

// A fresh 64 KiB run of the slot (caller holds no list mutex of another slot).
char* arena_set::new_run(std::size_t slot_index) {
  arena_slot& s = slot(slot_index);
  std::lock_guard lock(s.chunk_mutex);
  if (s.next_run == k_runs_per_chunk) {
    char* c = map_bound(k_chunk_bytes, k_chunk_bytes, slot_index, k_chunk_bytes);
    auto* h = reinterpret_cast<chunk_header*>(c);
    h->magic = k_chunk_magic;
    h->slot = static_cast<std::uint32_t>(slot_index);
    s.chunk = c;
    s.next_run = 1;  // run 0 holds the header
  }
  return s.chunk + k_run_bytes * s.next_run++;
}

std::size_t arena_set::take_batch(std::size_t slot_index, int cls, free_block** out, std::size_t want) {
  central_list& l = slot(slot_index).lists[cls];
  const std::size_t size = class_bytes(cls);
  std::lock_guard lock(l.mutex);
  std::size_t n = 0;
  while (n < want && l.head != nullptr) {
    out[n++] = l.head;
    l.head = l.head->next;
    --l.count;
  }
  while (n < want) {
    if (l.bump == l.bump_end) {
      if (n != 0) break;  // some blocks already: no new run for the rest
      l.bump = new_run(slot_index);
      l.bump_end = l.bump + k_run_bytes;
    }
    out[n++] = reinterpret_cast<free_block*>(l.bump);
    l.bump += size;
  }
  return n;
}

void arena_set::give_back(std::size_t slot_index, int cls, free_block* head, free_block* tail, std::size_t n) noexcept {
  central_list& l = slot(slot_index).lists[cls];
  std::lock_guard lock(l.mutex);
  tail->next = l.head;
  l.head = head;
  l.count += n;
}

void* arena_set::allocate_large(std::size_t bytes, std::size_t slot_index) {
  const std::size_t user = round_up(bytes, k_page);
  const std::size_t mapped = user + k_page;
  char* p = map_bound(mapped, k_page, slot_index, bytes);
  auto* h = reinterpret_cast<large_header*>(p);
  h->magic = k_large_magic;
  h->slot = static_cast<std::uint32_t>(slot_index);
  h->mapped = mapped;
  h->user = user;
  thread_cache* c = my_cache(*this);
  slot_counters& k = c != nullptr ? c->counters(slot_index) : slot(slot_index).retired;
  fetch_add(k.in_use, static_cast<std::int64_t>(user));
  fetch_add(k.allocations, 1);
  return p + k_page;
}

void* arena_set::allocate(std::size_t bytes, std::size_t slot_index) {
  if (bytes > k_small_max) return allocate_large(bytes, slot_index);
  const int cls = class_of(bytes);
  if (thread_cache* c = my_cache(*this)) return c->allocate(slot_index, cls);
  free_block* b = nullptr;
  take_batch(slot_index, cls, &b, 1);
  arena_slot& s = slot(slot_index);
  fetch_add(s.retired.in_use, static_cast<std::int64_t>(class_bytes(cls)));
  fetch_add(s.retired.allocations, 1);
  return b;
}

void arena_set::deallocate(void* p, std::size_t bytes) noexcept {
  if (bytes > k_small_max) {
    char* base = static_cast<char*>(p) - k_page;
    const auto* h = reinterpret_cast<const large_header*>(base);
    const std::size_t slot_index = h->slot;
    const std::size_t mapped = h->mapped;
    const std::size_t user = h->user;
    thread_cache* c = my_cache(*this);
    slot_counters& k = c != nullptr ? c->counters(slot_index) : slot(slot_index).retired;
    fetch_add(k.in_use, -static_cast<std::int64_t>(user));
    fetch_add(k.frees, 1);
    slot(slot_index).bytes_mapped.fetch_sub(mapped, std::memory_order_relaxed);  // relaxed: a statistic
    munmap(base, mapped);
    return;
  }
  const int cls = class_of(bytes);
  const std::size_t slot_index = slot_of_block(p);
  if (thread_cache* c = my_cache(*this)) {
    c->deallocate(p, slot_index, cls);
    return;
  }
  arena_slot& s = slot(slot_index);
  fetch_add(s.retired.in_use, -static_cast<std::int64_t>(class_bytes(cls)));
  fetch_add(s.retired.frees, 1);
  auto* b = static_cast<free_block*>(p);
  b->next = nullptr;
  give_back(slot_index, cls, b, b, 1);
}

void arena_set::enrol(thread_cache* c) {
  std::lock_guard lock(m_registry_mutex);
  m_caches.push_back(c);
}

void arena_set::retire(thread_cache* c) noexcept {
  std::lock_guard lock(m_registry_mutex);
  // relaxed loads: the exiting thread wrote these itself (single writer).
  for (std::size_t s = 0; s < m_slots.size(); ++s) {
    const slot_counters& k = c->counters(s);
    slot_counters& r = m_slots[s]->retired;
    fetch_add(r.in_use, k.in_use.load(std::memory_order_relaxed));
    fetch_add(r.allocations, k.allocations.load(std::memory_order_relaxed));
    fetch_add(r.frees, k.frees.load(std::memory_order_relaxed));
    fetch_add(r.remote_frees, k.remote_frees.load(std::memory_order_relaxed));
  }
  std::erase(m_caches, c);
}

numa_memory_stats arena_set::stats() {
  const numa_system& sys = system();
  numa_memory_stats out;
  out.binding = sys.binding;
  std::lock_guard lock(m_registry_mutex);
  auto entry = [&](std::size_t s, int node, std::string name) {
    numa_node_memory m;
    m.node = node;
    m.arena = std::move(name);
    // relaxed loads: racy snapshots of statistics counters (no pairing).
    const slot_counters& r = m_slots[s]->retired;
    std::int64_t in_use = r.in_use.load(std::memory_order_relaxed);
    m.allocations = r.allocations.load(std::memory_order_relaxed);
    m.frees = r.frees.load(std::memory_order_relaxed);
    m.remote_frees = r.remote_frees.load(std::memory_order_relaxed);
    for (const thread_cache* c : m_caches) {
      const slot_counters& k = c->counters(s);
      in_use += k.in_use.load(std::memory_order_relaxed);
      m.allocations += k.allocations.load(std::memory_order_relaxed);
      m.frees += k.frees.load(std::memory_order_relaxed);
      m.remote_frees += k.remote_frees.load(std::memory_order_relaxed);
    }
    m.bytes_in_use = in_use > 0 ? static_cast<std::uint64_t>(in_use) : 0;
    m.bytes_mapped = m_slots[s]->bytes_mapped.load(std::memory_order_relaxed);
    out.arenas.push_back(std::move(m));
  };
  for (int n : sys.allowed) entry(node_slot(n), n, "node " + std::to_string(n));
  entry(interleaved_slot(), -1, "interleaved");
  entry(unbound_slot(), -1, "unbound");
  return out;
}

}  // namespace strata::numa_detail
