// The checked decoder and the buffer builder (see wire.hpp).
#include "wire.hpp"

namespace strata::mpi::detail {
namespace {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one table lookup a
// byte: the bridge checks CRCs only when asked (STRATA_MPI_CRC=1), where a
// few hundred MB/s per rank is acceptable.
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto k_crc_table = make_table();

}  // namespace

std::uint32_t crc32c(const std::byte* p, std::size_t n) noexcept {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) c = k_crc_table[(c ^ static_cast<std::uint32_t>(p[i])) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string_view reject_name(reject r) noexcept {
  switch (r) {
    case reject::truncated: return "truncated";
    case reject::bad_magic: return "bad_magic";
    case reject::bad_version: return "bad_version";
    case reject::bad_flags: return "bad_flags";
    case reject::wrong_source: return "wrong_source";
    case reject::item_overrun: return "item_overrun";
    case reject::item_count: return "item_count";
    case reject::unknown_handler: return "unknown_handler";
    case reject::crc_mismatch: return "crc_mismatch";
    case reject::stale_sequence: return "stale_sequence";
    case reject::sequence_window: return "sequence_window";
    case reject::oversized: return "oversized";
    case reject::bad_payload: return "bad_payload";
    case reject::count_: break;
  }
  return "unknown";
}

checked check_buffer(const std::byte* p, std::size_t n, int mpi_source, bool require_crc) noexcept {
  checked out;
  const auto fail = [&](reject r) {
    out.ok = false;
    out.why = r;
    return out;
  };
  if (p == nullptr || n < sizeof(buffer_header)) return fail(reject::truncated);
  buffer_header& h = out.header;
  std::memcpy(&h, p, sizeof h);
  if (h.magic != k_magic) return fail(reject::bad_magic);
  if (h.version != k_version) return fail(reject::bad_version);
  if ((h.flags & ~(k_flag_crc | k_flag_large)) != 0 || h.reserved != 0) return fail(reject::bad_flags);
  if (require_crc && (h.flags & k_flag_crc) == 0) return fail(reject::bad_flags);
  if (mpi_source < 0 || h.source != static_cast<std::uint32_t>(mpi_source)) return fail(reject::wrong_source);
  // The header's size must be exactly what MPI delivered (no trailing bytes
  // either: a mismatch means a truncated or spliced message).
  if (static_cast<std::uint64_t>(h.bytes) + sizeof(buffer_header) != n) return fail(reject::truncated);
  if ((h.flags & k_flag_large) != 0 && h.items != 1) return fail(reject::item_count);
  // Every item must fit: header then payload, within the bytes left. An
  // item header takes 8 bytes, so a count above bytes/8 cannot fit.
  if (h.items > h.bytes / sizeof(item_header)) return fail(reject::item_count);
  std::size_t at = sizeof(buffer_header);
  for (std::uint32_t i = 0; i < h.items; ++i) {
    if (n - at < sizeof(item_header)) return fail(reject::item_overrun);
    item_header ih;
    std::memcpy(&ih, p + at, sizeof ih);
    at += sizeof ih;
    if (ih.length > n - at) return fail(reject::item_overrun);
    if (ih.handler == 0 || ih.handler > k_max_handler) return fail(reject::unknown_handler);
    at += ih.length;
  }
  if (at != n) return fail(reject::item_count);
  if ((h.flags & k_flag_crc) != 0 && crc32c(p + sizeof(buffer_header), h.bytes) != h.crc) {
    return fail(reject::crc_mismatch);
  }
  out.ok = true;
  return out;
}

void write_header(std::byte* buffer, std::size_t bytes, std::uint32_t items, std::uint32_t source,
                  std::uint32_t epoch, std::uint64_t sequence, bool with_crc, std::uint32_t crc, bool large) noexcept {
  buffer_header h{};
  h.magic = k_magic;
  h.version = k_version;
  h.flags = static_cast<std::uint16_t>((with_crc ? k_flag_crc : 0) | (large ? k_flag_large : 0));
  h.source = source;
  h.epoch = epoch;
  h.sequence = sequence;
  h.items = items;
  h.bytes = static_cast<std::uint32_t>(bytes - sizeof(buffer_header));
  h.crc = with_crc ? crc : 0;
  h.reserved = 0;
  std::memcpy(buffer, &h, sizeof h);
}

std::vector<std::byte> buffer_builder::seal(std::uint32_t source, std::uint32_t epoch, std::uint64_t sequence,
                                            bool with_crc, bool large) {
  const std::uint32_t crc =
      with_crc ? crc32c(m_bytes.data() + sizeof(buffer_header), m_bytes.size() - sizeof(buffer_header)) : 0;
  write_header(m_bytes.data(), m_bytes.size(), m_items, source, epoch, sequence, with_crc, crc, large);
  std::vector<std::byte> out;
  out.swap(m_bytes);
  m_items = 0;
  m_bytes.resize(sizeof(buffer_header));
  return out;
}

}  // namespace strata::mpi::detail
