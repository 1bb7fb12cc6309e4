// numa_alloc's public functions: placement checks, allocation entry points,
// node_of through move_pages, statistics.
#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include <strata/numa_alloc/memory.hpp>
#include <strata/numa_alloc/numa_allocator.hpp>

#include "arena.hpp"
#include "numa_system.hpp"

namespace strata {

namespace {

using numa_detail::arena_set;

void check_alignment(std::size_t align) {
  if (align == 0 || (align & (align - 1)) != 0 || align > numa_detail::k_page) {
    throw std::invalid_argument("strata::numa_allocate: alignment " + std::to_string(align) +
                                " is not supported; accepted: a power of two from 1 to 4096");
  }
}

// The slot serving a placement, after checking its node.
std::size_t slot_for(arena_set& a, memory_placement where) {
  switch (where.how()) {
    case memory_placement::kind::node: {
      if (std::string why = numa_detail::check_node(where.node()); !why.empty()) throw numa_error("strata: " + why);
      return a.node_slot(where.node());
    }
    case memory_placement::kind::local:
      return a.node_slot(numa_detail::current_node());
    case memory_placement::kind::interleaved:
      return a.interleaved_slot();
    case memory_placement::kind::unbound:
      return a.unbound_slot();
  }
  throw numa_error("strata: unknown memory placement");
}

}  // namespace

std::string memory_placement::describe() const {
  switch (m_kind) {
    case kind::node:
      return "node " + std::to_string(m_node);
    case kind::local:
      return "local";
    case kind::interleaved:
      return "interleaved";
    case kind::unbound:
      return "unbound";
  }
  return "?";
}

numa_bad_alloc::numa_bad_alloc(memory_placement where, std::size_t bytes, int err)
    : m_where(where),
      m_bytes(bytes),
      m_what("strata: cannot allocate " + std::to_string(bytes) + " bytes on " + where.describe() + ": " +
             std::strerror(err)) {}

namespace detail {
void check_placement(memory_placement where) {
  if (where.how() != memory_placement::kind::node) return;
  if (std::string why = numa_detail::check_node(where.node()); !why.empty()) throw numa_error("strata: " + why);
}
}  // namespace detail

bool set_thread_node(numa_node n) noexcept { return numa_detail::set_node_of_thread(n.value); }

void* numa_allocate(std::size_t bytes, memory_placement where, std::size_t align) {
  check_alignment(align);
  arena_set& a = arena_set::instance();
  const std::size_t slot = slot_for(a, where);
  const std::size_t need = bytes < align ? align : (bytes == 0 ? 1 : bytes);
  return a.allocate(need, slot);
}

void numa_deallocate(void* p, std::size_t bytes, std::size_t align) noexcept {
  if (p == nullptr) return;
  const std::size_t need = bytes < align ? align : (bytes == 0 ? 1 : bytes);
  arena_set::instance().deallocate(p, need);
}

void nodes_of(const void* const* ptrs, std::size_t n, int* out) noexcept {
  if (n == 0) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  std::vector<void*> pages(n);
  for (std::size_t i = 0; i < n; ++i) {
    const char* c = static_cast<const char*>(ptrs[i]);  // back to its page by arithmetic (keeps provenance)
    pages[i] = const_cast<char*>(c - (reinterpret_cast<std::uintptr_t>(c) & (page - 1)));
  }
  std::vector<int> status(n, -1);
  // nodes == nullptr: move_pages only reports where each page is (status:
  // the node, or -ENOENT for a page never touched, -EFAULT for no mapping).
  if (move_pages(0, n, pages.data(), nullptr, status.data(), 0) != 0) {
    for (std::size_t i = 0; i < n; ++i) out[i] = -1;
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = status[i] >= 0 ? status[i] : -1;
}

int node_of(const void* p) noexcept {
  int n = -1;
  nodes_of(&p, 1, &n);
  return n;
}

void prefer_small_pages(void* p, std::size_t bytes) noexcept {
  const std::uintptr_t page = numa_detail::k_page;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const auto lo = (at + page - 1) & ~(page - 1);
  const auto hi = (at + bytes) & ~(page - 1);
  if (hi > lo) madvise(static_cast<char*>(p) + (lo - at), hi - lo, MADV_NOHUGEPAGE);  // arithmetic: keeps provenance
}

std::size_t huge_page_bytes() noexcept { return numa_detail::k_chunk_bytes; }

bool numa_binding_available() { return numa_detail::system().binding; }

std::vector<int> numa_allowed_nodes() { return numa_detail::system().allowed; }

numa_memory_stats numa_stats() { return arena_set::instance().stats(); }

std::uint64_t numa_memory_stats::total_in_use() const noexcept {
  std::uint64_t n = 0;
  for (const auto& a : arenas) n += a.bytes_in_use;
  return n;
}

const numa_node_memory* numa_memory_stats::find_node(int node) const noexcept {
  for (const auto& a : arenas) {
    if (a.node == node && node >= 0) return &a;
  }
  return nullptr;
}

std::string numa_memory_stats::to_json() const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& a : arenas) {
    list.push_back({{"arena", a.arena},
                    {"node", a.node},
                    {"bytes_in_use", a.bytes_in_use},
                    {"bytes_mapped", a.bytes_mapped},
                    {"allocations", a.allocations},
                    {"frees", a.frees},
                    {"remote_frees", a.remote_frees}});
  }
  nlohmann::ordered_json j;
  j["binding"] = binding;
  j["arenas"] = std::move(list);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace strata
