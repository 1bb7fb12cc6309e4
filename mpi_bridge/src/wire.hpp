// The bridge's wire format, and its checked decoder (no MPI here: the
// decoder is a pure function over bytes, so unit tests and the libFuzzer
// target drive it directly).
//
// A buffer is what one MPI message carries:
//
//   buffer_header (40 bytes)
//     magic 'STRB', version, flags (crc present, large), source rank, epoch,
//     sequence (per directed link, from 0, one per buffer), item count,
//     payload bytes (everything after the header), crc32c of the payload
//   item*   { handler (u32), length (u32), length bytes }
//
// Everything is checked before a single item is dispatched: the size MPI
// reported against the header, the header's own fields, every item's length
// against what is left, the item count, the handler ids, the CRC when
// present. A buffer that fails any check is dropped whole and counted by
// reason; nothing in it is trusted. Integers are the machine's own byte
// order (one binary per job; the session checks the registries match).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace strata::mpi::detail {

inline constexpr std::uint32_t k_magic = 0x42525453;  // "STRB" in memory on a little-endian machine
inline constexpr std::uint16_t k_version = 1;
inline constexpr std::uint16_t k_flag_crc = 1;
inline constexpr std::uint16_t k_flag_large = 2;  // sent on the large-message tag, one item

struct buffer_header {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t flags;
  std::uint32_t source;
  std::uint32_t epoch;
  std::uint64_t sequence;
  std::uint32_t items;
  std::uint32_t bytes;
  std::uint32_t crc;
  std::uint32_t reserved;
};
static_assert(sizeof(buffer_header) == 40);

struct item_header {
  std::uint32_t handler;
  std::uint32_t length;
};
static_assert(sizeof(item_header) == 8);

// Handler ids of the items. A new one is a new wire version.
enum class handler : std::uint32_t {
  task = 1,          // u64 function id, u64 request id (0: no reply), argument bytes
  reply = 2,         // u64 request id, u8 status (0 value, 1 error, 2 dead letter), result bytes or error text
  large_notice = 3,  // the next buffer of this link comes on the large tag (no payload)
  actor_message = 4, // u64 actor address bits, u64 message type id, u64 request id, message bytes
  goodbye = 5,       // the sender's session is closing: it is gone, not silent (no payload)
  lookup = 6,        // u64 request id, name: a reply of u64 address bits (0: not published), u64 type id,
                     // then the type's name (or, when not published, the names that are)
};
inline constexpr std::uint32_t k_max_handler = 6;

// Why a buffer was dropped. Counted per reason in the session's stats.
enum class reject : unsigned {
  truncated,         // shorter than a header, or MPI's count differs from the header's size
  bad_magic,
  bad_version,
  bad_flags,
  wrong_source,      // header's source is not the MPI source
  item_overrun,      // an item's length runs past the buffer
  item_count,        // the items do not add up to the header's count and bytes
  unknown_handler,
  crc_mismatch,
  stale_sequence,    // a sequence number already seen on this link
  sequence_window,   // too far ahead of the next expected one
  oversized,         // a large message above the configured limit
  bad_payload,       // an item's payload did not decode (unknown function, short fields)
  count_
};
inline constexpr std::size_t k_reject_reasons = static_cast<std::size_t>(reject::count_);
std::string_view reject_name(reject r) noexcept;

std::uint32_t crc32c(const std::byte* p, std::size_t n) noexcept;

struct checked {
  bool ok = false;
  reject why = reject::truncated;
  buffer_header header{};
};

// Checks a whole buffer of `n` bytes (what MPI_Get_count said) from MPI rank
// `mpi_source`. `require_crc`: a buffer without a CRC is bad_flags.
checked check_buffer(const std::byte* p, std::size_t n, int mpi_source, bool require_crc) noexcept;

// Calls f(handler, payload, length) for each item of a buffer check_buffer
// accepted.
template <class F>
void for_each_item(const std::byte* p, const buffer_header& h, F&& f) {
  std::size_t at = sizeof(buffer_header);
  for (std::uint32_t i = 0; i < h.items; ++i) {
    item_header ih;
    std::memcpy(&ih, p + at, sizeof ih);
    at += sizeof ih;
    f(static_cast<handler>(ih.handler), p + at, static_cast<std::size_t>(ih.length));
    at += ih.length;
  }
}

// n bytes from src to dst (not overlapping). Up to 32 bytes by two
// fixed-size copies that may overlap each other, never reaching outside
// either range: a post_at item's payload is 16-32 bytes, where a call of
// memcpy for a size it must look at costs more than the copy.
inline void copy_bytes(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  if (n >= 8 && n <= 16) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n > 16 && n <= 32) {
    std::memcpy(dst, src, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n != 0) {
    std::memcpy(dst, src, n);
  }
}

// Writes one item (header, then head and body) at `at`; returns its size.
inline std::size_t write_item(std::byte* at, handler h, const std::byte* head, std::size_t hn, const std::byte* body,
                              std::size_t bn) noexcept {
  const item_header ih{static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(hn + bn)};
  std::memcpy(at, &ih, sizeof ih);
  copy_bytes(at + sizeof ih, head, hn);
  copy_bytes(at + sizeof ih + hn, body, bn);
  return sizeof ih + hn + bn;
}

// Writes the header of a buffer of `bytes` bytes in all (header included)
// holding `items` items, at its start; `crc` is crc32c of the payload when
// with_crc (computed apart: a sender computes it before taking the lock
// under which the sequence number is given).
void write_header(std::byte* buffer, std::size_t bytes, std::uint32_t items, std::uint32_t source,
                  std::uint32_t epoch, std::uint64_t sequence, bool with_crc, std::uint32_t crc, bool large) noexcept;

// Builds one buffer: items appended, then sealed with the header.
class buffer_builder {
 public:
  explicit buffer_builder(std::size_t reserve = 0) { reset(reserve); }
  void reset(std::size_t reserve) {
    m_bytes.clear();
    m_bytes.reserve(reserve);
    m_bytes.resize(sizeof(buffer_header));
    m_items = 0;
  }
  std::size_t size() const noexcept { return m_bytes.size(); }
  std::uint32_t items() const noexcept { return m_items; }
  bool empty() const noexcept { return m_items == 0; }
  void append(handler h, const std::byte* payload, std::size_t n) { append(h, nullptr, 0, payload, n); }
  // One item whose payload is head then body (no copy to join them first).
  void append(handler h, const std::byte* head, std::size_t hn, const std::byte* body, std::size_t bn) {
    const auto at = m_bytes.size();
    m_bytes.resize(at + sizeof(item_header) + hn + bn);
    write_item(m_bytes.data() + at, h, head, hn, body, bn);
    ++m_items;
  }
  // Writes the header and hands the bytes over; the builder is empty after
  // (a buffer of no items is a heartbeat).
  std::vector<std::byte> seal(std::uint32_t source, std::uint32_t epoch, std::uint64_t sequence, bool with_crc,
                              bool large);

 private:
  std::vector<std::byte> m_bytes;
  std::uint32_t m_items = 0;
};

}  // namespace strata::mpi::detail
