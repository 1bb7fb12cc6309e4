// Small helpers the bridge's files share (MPI error text, thread levels).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
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

// find_remote(id) through a one-entry cache per thread (bridge_receive.cpp).
const remote_entry* cached_remote(std::uint64_t id) noexcept;

}  // namespace strata::mpi::detail
