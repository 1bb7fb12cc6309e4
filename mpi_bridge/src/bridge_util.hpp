// Small helpers the bridge's files share (MPI error text, thread levels).
#pragma once

#include <mpi.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include <strata/mpi.hpp>
#include <strata/topology/error.hpp>

namespace strata::mpi::detail {

inline const char* level_name(thread_level l) {
  switch (l) {
    case thread_level::single: return "MPI_THREAD_SINGLE";
    case thread_level::funneled: return "MPI_THREAD_FUNNELED";
    case thread_level::serialized: return "MPI_THREAD_SERIALIZED";
    case thread_level::multiple: return "MPI_THREAD_MULTIPLE";
  }
  return "?";
}

inline int to_mpi(thread_level l) {
  switch (l) {
    case thread_level::single: return MPI_THREAD_SINGLE;
    case thread_level::funneled: return MPI_THREAD_FUNNELED;
    case thread_level::serialized: return MPI_THREAD_SERIALIZED;
    case thread_level::multiple: return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SINGLE;
}

inline thread_level from_mpi(int l) {
  if (l >= MPI_THREAD_MULTIPLE) return thread_level::multiple;
  if (l >= MPI_THREAD_SERIALIZED) return thread_level::serialized;
  if (l >= MPI_THREAD_FUNNELED) return thread_level::funneled;
  return thread_level::single;
}

inline std::string mpi_error(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(len));
}

inline void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw config_error(std::string("strata::mpi: ") + what + " failed: " + mpi_error(rc));
}

inline std::uint64_t read_u64(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Asks for the cache line at `p` in a state this core may write (a hint:
// it never faults, nor changes memory). A producer appending to a reused
// send buffer wants it: the buffer's lines were last read by the MPI
// library's copy (on the peer's core, for a shared-memory transfer), so a
// store to one waits for the line to be taken back, and the next locked
// instruction waits for that store. x86's plain prefetch asks for a shared
// copy, which does not help; PREFETCHW (its CPUID bit checked once, as the
// Linux kernel does) asks for an owned one. Elsewhere the compiler's
// write prefetch is already that.
#if defined(__x86_64__) || defined(__i386__)
inline const bool k_has_prefetchw = [] {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(0x80000001u, &a, &b, &c, &d) != 0 && (c & (1u << 8)) != 0;  // PRFCHW / 3DNowPrefetch
}();
inline void prefetch_for_write(const void* p) noexcept {
  if (k_has_prefetchw) asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
}
#else
inline void prefetch_for_write(const void* p) noexcept { __builtin_prefetch(p, 1, 3); }
#endif

// A producer's lock of a link: spin a little first (a seal or a take holds
// it well under a microsecond), then block.
inline void lock_lane(std::mutex& m) {
  for (int i = 0; i < 64; ++i) {
    if (m.try_lock()) return;
    __builtin_ia32_pause();
  }
  m.lock();
}

// find_remote(id) through a one-entry cache per thread (bridge_receive.cpp).
const remote_entry* cached_remote(std::uint64_t id) noexcept;

}  // namespace strata::mpi::detail
