// NUMA memory: where bytes live, and proof of it.
//
//   void* p = strata::numa_allocate(bytes, strata::memory_placement::on(strata::numa_node{1}));
//   strata::numa_deallocate(p, bytes);
//   int node = strata::node_of(p);          // node holding the page; -1 if untouched
//   strata::numa_stats().to_json();         // bytes per node
//
// One process-wide set of arenas, one per NUMA node of this machine plus one
// interleaved and one unbound (plain memory), created on first use. Small
// blocks (up to 32 KiB) come from 2 MiB chunks bound to their node and are
// cached per thread; larger blocks are their own bound mapping. A block is
// only ever reused for its own node. See src/arena.hpp for the design.
//
// Errors: a node this machine does not have (or the process may not use) is
// a numa_error naming the node and the allowed ones; an allocation the
// kernel refuses is a numa_bad_alloc carrying the node and the size. A
// machine without NUMA binding (no libnuma support in the kernel, mbind
// refused) prints one warning and hands out plain memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <strata/topology/ids.hpp>

namespace strata {

// Where an allocation's pages go.
class memory_placement {
 public:
  enum class kind : std::uint8_t {
    node,         // bound to one NUMA node (mbind MPOL_BIND)
    local,        // the node of the CPU the allocating thread runs on, resolved per allocation
    interleaved,  // pages round-robin over the nodes the process may use (MPOL_INTERLEAVE)
    unbound,      // plain memory: the kernel's default policy (first touch)
  };

  static constexpr memory_placement on(numa_node n) noexcept { return memory_placement{kind::node, n.value}; }
  static constexpr memory_placement local() noexcept { return memory_placement{kind::local, -1}; }
  static constexpr memory_placement interleaved() noexcept { return memory_placement{kind::interleaved, -1}; }
  static constexpr memory_placement unbound() noexcept { return memory_placement{kind::unbound, -1}; }

  constexpr kind how() const noexcept { return m_kind; }
  // The node for kind::node; -1 otherwise.
  constexpr int node() const noexcept { return m_node; }
  std::string describe() const;

  friend constexpr bool operator==(memory_placement, memory_placement) = default;

 private:
  constexpr memory_placement(kind k, int n) noexcept : m_kind(k), m_node(n) {}
  kind m_kind = kind::unbound;
  int m_node = -1;
};

// A NUMA node that does not exist here or that the process may not use.
class numa_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The kernel refused memory for a placement.
class numa_bad_alloc : public std::bad_alloc {
 public:
  numa_bad_alloc(memory_placement where, std::size_t bytes, int err);
  const char* what() const noexcept override { return m_what.c_str(); }
  memory_placement where() const noexcept { return m_where; }
  int node() const noexcept { return m_where.node(); }
  std::size_t size() const noexcept { return m_bytes; }

 private:
  memory_placement m_where;
  std::size_t m_bytes;
  std::string m_what;
};

// Allocates `bytes` (> 0) aligned to `align` (a power of two, at most 4096)
// with the given placement. Throws numa_error for a node that is not
// usable, numa_bad_alloc when the kernel has no memory.
void* numa_allocate(std::size_t bytes, memory_placement where, std::size_t align = alignof(std::max_align_t));
// Returns a block from numa_allocate; `bytes` and `align` as given there.
// Any thread may free any block: it goes back to its own node.
void numa_deallocate(void* p, std::size_t bytes, std::size_t align = alignof(std::max_align_t)) noexcept;

// The NUMA node holding the page of p (move_pages), or -1 when the page was
// never touched or the kernel cannot tell.
int node_of(const void* p) noexcept;
// node_of for many pointers at once (one system call): out[i] = node_of(ptrs[i]).
void nodes_of(const void* const* ptrs, std::size_t n, int* out) noexcept;

// Advises the kernel to back [p, p + bytes) with base pages, not transparent
// huge pages (madvise MADV_NOHUGEPAGE on the whole pages inside). first_touch
// uses it where two workers' chunks meet: a 2 MiB page there would land on
// whichever worker wrote it first. Only advice; untouched memory only.
void prefer_small_pages(void* p, std::size_t bytes) noexcept;
// The transparent huge page size (2 MiB on x86-64).
std::size_t huge_page_bytes() noexcept;

// Tells numa_alloc that the calling thread stays on NUMA node n (it is
// pinned to CPUs of that node): memory_placement::local() then means n
// without a CPU lookup (sched_getcpu) on every allocation. The runtime's
// pinned workers call it; a thread that may move must not. Returns false,
// and changes nothing, for a node this process may not use.
bool set_thread_node(numa_node n) noexcept;

// True when memory can be bound to nodes here (libnuma reports NUMA support
// and the kernel accepted mbind); false means every placement is plain memory.
bool numa_binding_available();
// The nodes this process may allocate on (ascending OS indices).
std::vector<int> numa_allowed_nodes();

struct numa_node_memory {
  int node = -1;                  // OS index; -1 for the interleaved and unbound arenas
  std::string arena;              // "node 0", ..., "interleaved", "unbound"
  std::uint64_t bytes_in_use = 0; // handed out and not yet returned (block sizes)
  std::uint64_t bytes_mapped = 0; // obtained from the kernel (chunks and large mappings)
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t remote_frees = 0; // freed by a thread whose home node is another one
};

struct numa_memory_stats {
  bool binding = false;  // numa_binding_available()
  std::vector<numa_node_memory> arenas;
  std::uint64_t total_in_use() const noexcept;
  const numa_node_memory* find_node(int node) const noexcept;
  std::string to_json() const;
};

// Bytes per node, summed over every thread (a consistent snapshot is not
// promised while other threads allocate).
numa_memory_stats numa_stats();

}  // namespace strata
