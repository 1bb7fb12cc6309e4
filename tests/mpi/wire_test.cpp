// The bridge's wire format and checked decoder, without MPI: every kind of
// malformed buffer is rejected for its own reason and dispatches nothing;
// values round-trip through the serializer; what cannot cross ranks does
// not compile.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <strata/mpi/remote.hpp>
#include <strata/mpi/serialize.hpp>

#include "wire.hpp"

namespace {

using namespace strata::mpi;
using namespace strata::mpi::detail;

std::vector<std::byte> good_buffer(std::uint32_t source, bool crc) {
  buffer_builder b(4096);
  const std::byte payload[16] = {};
  b.append(handler::task, payload, sizeof payload);
  b.append(handler::large_notice, nullptr, 0);
  b.append(handler::reply, payload, 9);
  return b.seal(source, 3, 7, crc, false);
}

reject why(const std::vector<std::byte>& b, int source = 1, bool require_crc = false) {
  const checked c = check_buffer(b.data(), b.size(), source, require_crc);
  EXPECT_FALSE(c.ok);
  return c.why;
}

template <class T>
void poke(std::vector<std::byte>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

TEST(Wire, AGoodBufferChecksAndListsItsItems) {
  for (bool crc : {false, true}) {
    const auto b = good_buffer(1, crc);
    const checked c = check_buffer(b.data(), b.size(), 1, crc);
    ASSERT_TRUE(c.ok) << reject_name(c.why);
    EXPECT_EQ(c.header.sequence, 7u);
    EXPECT_EQ(c.header.epoch, 3u);
    EXPECT_EQ(c.header.items, 3u);
    std::vector<std::pair<handler, std::size_t>> items;
    for_each_item(b.data(), c.header, [&](handler h, const std::byte*, std::size_t n) { items.emplace_back(h, n); });
    EXPECT_EQ(items, (std::vector<std::pair<handler, std::size_t>>{
                         {handler::task, 16}, {handler::large_notice, 0}, {handler::reply, 9}}));
  }
}

TEST(Wire, EveryMalformationHasItsReason) {
  const auto good = good_buffer(1, true);
  EXPECT_EQ(why({}), reject::truncated);
  EXPECT_EQ(why(std::vector<std::byte>(good.begin(), good.begin() + 20)), reject::truncated);
  EXPECT_EQ(why(std::vector<std::byte>(good.begin(), good.end() - 1)), reject::truncated) << "MPI count < header";
  auto longer = good;
  longer.push_back(std::byte{0});
  EXPECT_EQ(why(longer), reject::truncated) << "trailing bytes";
  auto b = good;
  poke<std::uint32_t>(b, 0, 0xdeadbeef);
  EXPECT_EQ(why(b), reject::bad_magic);
  b = good;
  poke<std::uint16_t>(b, 4, 99);
  EXPECT_EQ(why(b), reject::bad_version);
  b = good;
  poke<std::uint16_t>(b, 6, 0x80);
  EXPECT_EQ(why(b), reject::bad_flags);
  b = good;
  poke<std::uint32_t>(b, 36, 1);
  EXPECT_EQ(why(b), reject::bad_flags) << "reserved must be zero";
  EXPECT_EQ(why(good_buffer(1, false), 1, true), reject::bad_flags) << "CRC required";
  EXPECT_EQ(why(good, 2), reject::wrong_source);
  EXPECT_EQ(why(good, -1), reject::wrong_source);
  b = good;
  poke<std::uint32_t>(b, 24, 4);
  EXPECT_EQ(why(b), reject::item_overrun) << "one item more than there is";
  b = good;
  poke<std::uint32_t>(b, 24, 2);
  EXPECT_EQ(why(b), reject::item_count) << "one item fewer: bytes left over";
  b = good;
  poke<std::uint32_t>(b, 24, 0xffffffff);
  EXPECT_EQ(why(b), reject::item_count);
  b = good;
  poke<std::uint32_t>(b, 40 + 4, 0xfffffff0);  // the first item's length
  EXPECT_EQ(why(b), reject::item_overrun);
  b = good;
  poke<std::uint32_t>(b, 40, 77);  // the first item's handler
  EXPECT_EQ(why(b), reject::unknown_handler);
  b = good;
  poke<std::uint32_t>(b, 40, 0);
  EXPECT_EQ(why(b), reject::unknown_handler);
  b = good;
  b[50] = std::byte{1};  // payload byte: only the CRC notices
  EXPECT_EQ(why(b), reject::crc_mismatch);
  b = good;
  poke<std::uint16_t>(b, 6, 2);  // large flag with 3 items
  EXPECT_EQ(why(b), reject::item_count);
}

TEST(Wire, Crc32cKnownValue) {
  // RFC 3720 B.4: CRC32C of 32 zero bytes is 0x8A9136AA; of "123456789" 0xE3069283.
  std::vector<std::byte> zeros(32);
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  const char* s = "123456789";
  EXPECT_EQ(crc32c(reinterpret_cast<const std::byte*>(s), 9), 0xE3069283u);
}

struct point {
  double x, y;
  int id;
};

struct named {
  std::string name;
  std::vector<int> values;
};

// Aggregates go field by field, without a specialisation.
struct job {
  std::string name;
  std::vector<point> points;
  std::optional<std::uint32_t> limit;
  bool urgent;
};
struct with_map {
  int id;
  std::map<int, int> m;
};
struct with_pointer_field {
  std::string s;
  const char* p;
};

}  // namespace

template <>
struct strata::mpi::serialize<named> {
  static void write(writer& w, const named& v) {
    w.value(v.name);
    w.value(v.values);
  }
  static named read(reader& r) { return {r.value<std::string>(), r.value<std::vector<int>>()}; }
};

namespace {

template <class T>
T round_trip(const T& v) {
  std::vector<std::byte> bytes;
  writer w(bytes);
  w.value(v);
  reader r(bytes.data(), bytes.size());
  T out = r.value<T>();
  EXPECT_EQ(r.left(), 0u);
  return out;
}

TEST(Serialize, ValuesRoundTrip) {
  EXPECT_EQ(round_trip(42), 42);
  EXPECT_EQ(round_trip(std::string("halo")), "halo");
  EXPECT_EQ(round_trip(std::vector<double>{1.5, 2.5}), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(round_trip(std::vector<std::string>{"a", "", "bc"}), (std::vector<std::string>{"a", "", "bc"}));
  EXPECT_EQ(round_trip(std::vector<bool>{true, false, true}), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(round_trip(std::optional<int>{}), std::optional<int>{});
  EXPECT_EQ(round_trip(std::optional<int>{5}), std::optional<int>{5});
  EXPECT_EQ(round_trip(std::make_pair(1, std::string("x"))), std::make_pair(1, std::string("x")));
  EXPECT_EQ(round_trip(std::make_tuple(1, 2.0, std::string("t"))), std::make_tuple(1, 2.0, std::string("t")));
  const point p = round_trip(point{1, 2, 3});
  EXPECT_EQ(p.id, 3);
  const named n = round_trip(named{"cells", {1, 2, 3}});
  EXPECT_EQ(n.name, "cells");
  EXPECT_EQ(n.values, (std::vector<int>{1, 2, 3}));
  const job j = round_trip(job{"halo", {{1, 2, 3}, {4, 5, 6}}, 9u, true});
  EXPECT_EQ(j.name, "halo");
  ASSERT_EQ(j.points.size(), 2u);
  EXPECT_EQ(j.points[1].id, 6);
  EXPECT_EQ(j.limit, std::optional<std::uint32_t>{9});
  EXPECT_TRUE(j.urgent);
}

TEST(Serialize, CorruptLengthsThrowAndNeverOverread) {
  std::vector<std::byte> bytes;
  writer w(bytes);
  w.value(std::string("hello"));
  bytes.resize(bytes.size() - 1);
  reader r(bytes.data(), bytes.size());
  EXPECT_THROW((void)r.value<std::string>(), decode_error);
  // A length of 2^60 elements: refused before any allocation.
  std::vector<std::byte> huge(8);
  const std::uint64_t n = std::uint64_t{1} << 60;
  std::memcpy(huge.data(), &n, 8);
  reader r2(huge.data(), huge.size());
  EXPECT_THROW((void)r2.value<std::vector<double>>(), decode_error);
  reader r3(huge.data(), huge.size());
  EXPECT_THROW((void)r3.value<std::vector<std::string>>(), decode_error);
  std::vector<std::byte> flag{std::byte{7}};
  reader r4(flag.data(), flag.size());
  EXPECT_THROW((void)r4.value<std::optional<int>>(), decode_error);
  // A bool byte other than 0 or 1 (found by the fuzzer: loading it was UB).
  std::vector<std::byte> bools(8 + 2);
  const std::uint64_t two = 2;
  std::memcpy(bools.data(), &two, 8);
  bools[8] = std::byte{1};
  bools[9] = std::byte{104};
  reader r5(bools.data(), bools.size());
  EXPECT_THROW((void)r5.value<std::vector<bool>>(), decode_error);
  reader r6(bools.data() + 9, 1);
  EXPECT_THROW((void)r6.value<bool>(), decode_error);
}

// A struct that goes field by field (std::pair is not trivially copyable)
// and still has a fixed size.
struct pair_and_flag {
  std::pair<int, std::uint16_t> a;
  bool flag;
};

template <class T>
void expect_fixed_matches_writer(const T& v) {
  std::vector<std::byte> by_writer;
  writer w(by_writer);
  w.value(v);
  constexpr std::size_t n = fixed_size<T>();
  static_assert(n != k_not_fixed);
  ASSERT_EQ(n, by_writer.size());
  std::vector<std::byte> by_put(n + 1, std::byte{0xee});
  EXPECT_EQ(put_fixed(by_put.data(), v), by_put.data() + n);
  EXPECT_EQ(by_put[n], std::byte{0xee}) << "wrote past its size";
  by_put.resize(n);
  EXPECT_EQ(by_put, by_writer);
}

// post_at, submit_at and remote actor sends encode fixed-size arguments on
// the stack with put_fixed: the bytes are writer::value's, so the receiver's
// reader decodes them.
TEST(Serialize, FixedSizeValuesEncodeAsTheWriterDoes) {
  expect_fixed_matches_writer(std::uint64_t{0x0102030405060708});
  expect_fixed_matches_writer(true);
  expect_fixed_matches_writer(point{1.5, -2.5, 7});
  expect_fixed_matches_writer(std::make_pair(3, 4.5));
  expect_fixed_matches_writer(std::make_tuple(std::uint32_t{9}, false, point{0, 1, 2}, 'c'));
  expect_fixed_matches_writer(std::tuple<>{});
  expect_fixed_matches_writer(pair_and_flag{{-1, 65535}, true});
  const pair_and_flag back = round_trip(pair_and_flag{{-1, 65535}, true});
  EXPECT_EQ(back.a, (std::pair<int, std::uint16_t>{-1, 65535}));
  EXPECT_TRUE(back.flag);
  static_assert(fixed_size<std::tuple<>>() == 0);
  static_assert(fixed_size<std::tuple<int, bool>>() == sizeof(int) + 1);
  static_assert(fixed_size<std::string>() == k_not_fixed);
  static_assert(fixed_size<std::vector<int>>() == k_not_fixed);
  static_assert(fixed_size<std::optional<int>>() == k_not_fixed);
  static_assert(fixed_size<named>() == k_not_fixed, "customised: its own encoding");
  static_assert(fixed_size<std::tuple<int, std::string>>() == k_not_fixed);
  static_assert(fixed_size<job>() == k_not_fixed);
}

// ---- A run of post_at items (call_posted_run) ----------------------------------

std::vector<std::uint64_t> g_calls;  // what the handlers below saw, in order
void record(std::uint32_t v, std::uint32_t w) {
  if (v == 13) throw std::runtime_error("thirteen");
  g_calls.push_back(std::uint64_t{v} * 1000 + w);
}
struct big_arg {
  std::uint8_t bytes[4096];
};
void record_big(big_arg b) { g_calls.push_back(b.bytes[0] + b.bytes[4095]); }
void record_name(std::string s) {
  if (s == "bad") throw 7;  // not a std::exception
  g_calls.push_back(s.size());
}

struct failures {
  std::vector<std::pair<std::size_t, std::string>> seen;
  static void add(void* ctx, std::size_t index, const char* what) {
    static_cast<failures*>(ctx)->seen.emplace_back(index, what != nullptr ? what : "(not a std::exception)");
  }
};

template <class... A>
std::vector<std::byte> encoded(const A&... a) {
  std::vector<std::byte> bytes;
  writer w(bytes);
  (w.value(a), ...);
  return bytes;
}

// Fixed-size arguments: decoded first, then called in a loop of their own;
// an item that does not decode (short, or with trailing bytes) and a call
// that throws are each reported with their index, and every other item runs
// in order.
TEST(PostedRun, DecodesThenCallsInOrderAndReportsEachFailure) {
  g_calls.clear();
  std::vector<std::vector<std::byte>> args;
  for (std::uint32_t i = 0; i < 20; ++i) args.push_back(encoded(i, i + 1));
  args[3].pop_back();                        // truncated
  args[5].push_back(std::byte{0});           // a trailing byte
  std::vector<posted_item> items;
  for (const auto& a : args) items.push_back({a.data(), a.size()});
  failures f;
  call_posted_run<&record>(items.data(), items.size(), &failures::add, &f);
  std::vector<std::uint64_t> want;
  for (std::uint64_t i = 0; i < 20; ++i) {
    if (i != 3 && i != 5 && i != 13) want.push_back(i * 1000 + i + 1);
  }
  EXPECT_EQ(g_calls, want);
  ASSERT_EQ(f.seen.size(), 3u);
  EXPECT_EQ(f.seen[0].first, 3u);
  EXPECT_EQ(f.seen[1].first, 5u);
  EXPECT_NE(f.seen[1].second.find("trailing"), std::string::npos) << f.seen[1].second;
  EXPECT_EQ(f.seen[2].first, 13u);
  EXPECT_EQ(f.seen[2].second, "thirteen");
}

// Arguments that are not trivially copyable go one item at a time, with the
// same reports; a run never goes past k_posted_run items.
TEST(PostedRun, OtherArgumentsOneAtATimeAndAtMostARun) {
  g_calls.clear();
  std::vector<std::vector<std::byte>> args{encoded(std::string("ab")), encoded(std::string("bad")),
                                           encoded(std::string("abcd"))};
  args.push_back({std::byte{1}});  // not a string's encoding
  std::vector<posted_item> items;
  for (const auto& a : args) items.push_back({a.data(), a.size()});
  failures f;
  call_posted_run<&record_name>(items.data(), items.size(), &failures::add, &f);
  EXPECT_EQ(g_calls, (std::vector<std::uint64_t>{2, 4}));
  ASSERT_EQ(f.seen.size(), 2u);
  EXPECT_EQ(f.seen[0], (std::pair<std::size_t, std::string>{1, "(not a std::exception)"}));
  EXPECT_EQ(f.seen[1].first, 3u);

  // A plain struct too large to keep a run of on the stack: one at a time.
  g_calls.clear();
  big_arg b{};
  b.bytes[0] = 3;
  b.bytes[4095] = 4;
  const auto big = encoded(b);
  std::vector<posted_item> bigs(3, posted_item{big.data(), big.size()});
  call_posted_run<&record_big>(bigs.data(), bigs.size(), &failures::add, &f);
  EXPECT_EQ(g_calls, (std::vector<std::uint64_t>{7, 7, 7}));

  g_calls.clear();
  const auto one = encoded(std::uint32_t{1}, std::uint32_t{2});
  std::vector<posted_item> many(k_posted_run + 5, posted_item{one.data(), one.size()});
  call_posted_run<&record>(many.data(), many.size(), &failures::add, &f);
  EXPECT_EQ(g_calls.size(), k_posted_run);
}

// What cannot cross ranks is refused at compile time.
static_assert(serializable<int> && serializable<point> && serializable<std::string> && serializable<named>);
static_assert(serializable<std::vector<std::tuple<int, std::string>>>);
static_assert(!serializable<int*>, "a pointer never crosses");
static_assert(!serializable<std::vector<const char*>>);
static_assert(!serializable<std::map<int, int>>, "not trivially copyable and not customised");
static_assert(!serializable<std::tuple<int, std::map<int, int>>>);
static_assert(serializable<job> && strata::mpi::detail::field_count<job>() == 4);
static_assert(!serializable<with_map>, "a struct with a field that cannot cross");
static_assert(!serializable<with_pointer_field>, "a pointer field in a struct that goes field by field");

}  // namespace
