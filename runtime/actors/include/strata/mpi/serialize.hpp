// How values cross ranks: by value, in a byte stream, never as a pointer.
//
//   trivially copyable types (no raw or member pointers), std::string,
//   std::vector<T> and std::optional<T> of serializable T, std::pair and
//   std::tuple of them, aggregates (plain structs) of them, field by field,
//   up to 12 fields and without C-array fields (use std::array), and any
//   type with a specialisation
//
//     template <> struct strata::mpi::serialize<my_type> {
//       static void write(strata::mpi::writer& w, const my_type& v);
//       static my_type read(strata::mpi::reader& r);
//     };
//
// Anything else is a compile-time error (static_assert naming the type's
// requirement), so a std::map or a pointer never crosses silently.
//
// The format is the machine's own byte order and layout: the ranks of one job
// run one binary (the session compares the registries' digests at start).
// The reader checks every length against what is left of its buffer and
// throws decode_error; it never reads past the end.
//
// It lives with the actors (target strata::actors), not in mpi_bridge/: a
// message to an actor on another rank is encoded where actor_ref::send is
// instantiated, so actor.hpp needs it; it has no MPI in it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace strata::mpi {

// A message whose bytes do not decode as the type its handler expects.
class decode_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class writer {
 public:
  explicit writer(std::vector<std::byte>& out) noexcept : m_out(out) {}
  void bytes(const void* p, std::size_t n) {
    // insert, not resize and copy: resize zero-fills first, out of line (a
    // twelfth of a posting thread's time on 8-byte items).
    const auto* b = static_cast<const std::byte*>(p);
    const std::size_t at = m_out.size();
    if (m_out.capacity() - at < n) grow(at + n);
    m_out.insert(m_out.end(), b, b + n);
  }
  template <class T>
  void value(const T& v);

 private:
  // Out of line, so that insert never reallocates where it is inlined (GCC
  // 12 reports a false -Wstringop-overflow on that path in some callers).
  [[gnu::noinline]] void grow(std::size_t need) { m_out.reserve(std::max(need, 2 * m_out.capacity())); }
  std::vector<std::byte>& m_out;
};

class reader {
 public:
  reader(const std::byte* p, std::size_t n) noexcept : m_p(p), m_left(n) {}
  void bytes(void* dst, std::size_t n) {
    if (n > m_left) throw_truncated(n, m_left);
    if (n != 0) std::memcpy(dst, m_p, n);
    m_p += n;
    m_left -= n;
  }
  // A count of elements of `element` bytes each that must fit in what is
  // left (a corrupt length cannot make the reader allocate without bound).
  std::size_t count(std::size_t element) {
    std::uint64_t n = 0;
    bytes(&n, sizeof n);
    if (element != 0 && n > m_left / element) throw_too_long(n, m_left);
    return static_cast<std::size_t>(n);
  }
  std::size_t left() const noexcept { return m_left; }
  template <class T>
  T value();

 private:
  // Out of line, so that the checks above stay a compare and a branch.
  [[noreturn, gnu::noinline, gnu::cold]] static void throw_truncated(std::size_t wanted, std::size_t left) {
    throw decode_error("strata::mpi: truncated value (wanted " + std::to_string(wanted) + " bytes, " +
                       std::to_string(left) + " left)");
  }
  [[noreturn, gnu::noinline, gnu::cold]] static void throw_too_long(std::uint64_t n, std::size_t left) {
    throw decode_error("strata::mpi: length " + std::to_string(n) + " exceeds the " + std::to_string(left) +
                       " bytes left");
  }
  // Braced initialisation evaluates the elements left to right.
  template <class T, std::size_t... I>
  T read_tuple(std::index_sequence<I...>) {
    return T{value<std::tuple_element_t<I, T>>()...};
  }
  template <class T, class F, std::size_t... I>
  T read_fields(std::index_sequence<I...>) {
    return T{value<std::tuple_element_t<I, F>>()...};
  }

  const std::byte* m_p;
  std::size_t m_left;
};

// The customisation point: specialise with static write(writer&, const T&)
// and static T read(reader&).
template <class T>
struct serialize;

namespace detail {

template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};

template <class T>
concept customised = requires(writer& w, reader& r, const T& v) {
  serialize<T>::write(w, v);
  { serialize<T>::read(r) } -> std::same_as<T>;
};

template <class T>
concept plain_bytes = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> &&
                      !std::is_member_pointer_v<T> && !std::is_reference_v<T>;

template <class T>
constexpr bool serializable_v();

// Aggregates that are not trivially copyable (a struct with a std::string
// or std::vector field) go field by field: the fields are counted by
// brace-initialising from values convertible to anything (a C-array field
// would count once per element: those are excluded by the documentation,
// and a miscount is a compile error in tie_fields, not a silent one), then
// bound by a structured binding.
struct any_field {
  template <class U>
  operator U() const;  // never defined: unevaluated contexts only
};
template <class T, std::size_t... I>
constexpr bool brace_init_with(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), any_field{})...}; };
}
inline constexpr std::size_t k_max_fields = 12;
template <class T, std::size_t N = 0>
constexpr std::size_t field_count() {
  if constexpr (N > k_max_fields || !brace_init_with<T>(std::make_index_sequence<N + 1>{})) {
    return N;
  } else {
    return field_count<T, N + 1>();
  }
}
template <class T>
concept by_fields = std::is_aggregate_v<T> && std::is_class_v<T> && !std::is_trivially_copyable_v<T> &&
                    field_count<T>() >= 1 && field_count<T>() <= k_max_fields;

// std::tie of v's fields (v may be const).
template <class T>
auto tie_fields(T& v) {
  constexpr std::size_t n = field_count<std::remove_const_t<T>>();
  // clang-format off
  if constexpr (n == 1) { auto& [a] = v; return std::tie(a); }
  else if constexpr (n == 2) { auto& [a, b] = v; return std::tie(a, b); }
  else if constexpr (n == 3) { auto& [a, b, c] = v; return std::tie(a, b, c); }
  else if constexpr (n == 4) { auto& [a, b, c, d] = v; return std::tie(a, b, c, d); }
  else if constexpr (n == 5) { auto& [a, b, c, d, e] = v; return std::tie(a, b, c, d, e); }
  else if constexpr (n == 6) { auto& [a, b, c, d, e, f] = v; return std::tie(a, b, c, d, e, f); }
  else if constexpr (n == 7) { auto& [a, b, c, d, e, f, g] = v; return std::tie(a, b, c, d, e, f, g); }
  else if constexpr (n == 8) { auto& [a, b, c, d, e, f, g, h] = v; return std::tie(a, b, c, d, e, f, g, h); }
  else if constexpr (n == 9) { auto& [a, b, c, d, e, f, g, h, i] = v; return std::tie(a, b, c, d, e, f, g, h, i); }
  else if constexpr (n == 10) {
    auto& [a, b, c, d, e, f, g, h, i, j] = v; return std::tie(a, b, c, d, e, f, g, h, i, j);
  } else if constexpr (n == 11) {
    auto& [a, b, c, d, e, f, g, h, i, j, k] = v; return std::tie(a, b, c, d, e, f, g, h, i, j, k);
  } else {
    auto& [a, b, c, d, e, f, g, h, i, j, k, l] = v; return std::tie(a, b, c, d, e, f, g, h, i, j, k, l);
  }
  // clang-format on
}
// The fields' types, as a tuple of values.
template <class T>
struct fields_of;
template <class... F>
struct fields_of<std::tuple<F&...>> {
  using type = std::tuple<std::remove_cv_t<F>...>;
};
template <class T>
using fields_t = typename fields_of<decltype(tie_fields(std::declval<T&>()))>::type;

template <class Tuple, std::size_t... I>
constexpr bool all_serializable(std::index_sequence<I...>) {
  return (serializable_v<std::tuple_element_t<I, Tuple>>() && ...);
}

template <class T>
constexpr bool serializable_v() {
  if constexpr (customised<T>) {
    return true;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return true;
  } else if constexpr (is_vector<T>::value || is_optional<T>::value) {
    return serializable_v<typename T::value_type>();
  } else if constexpr (is_pair<T>::value) {
    return serializable_v<typename T::first_type>() && serializable_v<typename T::second_type>();
  } else if constexpr (is_tuple<T>::value) {
    return all_serializable<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (by_fields<T>) {
    using F = fields_t<T>;
    return all_serializable<F>(std::make_index_sequence<std::tuple_size_v<F>>{});
  } else {
    return plain_bytes<T>;
  }
}

// The encoded size of T when it does not depend on the value (plain bytes,
// bool, and pairs, tuples and field-by-field aggregates of those), else
// k_not_fixed. Such a value is encoded into a buffer on the stack by
// put_fixed (the same bytes writer::value writes), with no heap and no
// per-value size check: a post of a few integers is a few stores.
inline constexpr std::size_t k_not_fixed = ~std::size_t{0};
template <class Tuple, std::size_t... I>
constexpr std::size_t fixed_sum(std::index_sequence<I...>);
template <class T>
constexpr std::size_t fixed_size() {
  if constexpr (customised<T> || std::is_same_v<T, std::string> || is_vector<T>::value || is_optional<T>::value) {
    return k_not_fixed;
  } else if constexpr (is_pair<T>::value) {
    return fixed_sum<std::tuple<typename T::first_type, typename T::second_type>>(std::make_index_sequence<2>{});
  } else if constexpr (is_tuple<T>::value) {
    return fixed_sum<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (by_fields<T>) {
    using F = fields_t<T>;
    return fixed_sum<F>(std::make_index_sequence<std::tuple_size_v<F>>{});
  } else if constexpr (std::is_same_v<T, bool>) {
    return 1;
  } else if constexpr (plain_bytes<T>) {
    return sizeof(T);
  } else {
    return k_not_fixed;
  }
}
template <class Tuple, std::size_t... I>
constexpr std::size_t fixed_sum(std::index_sequence<I...>) {
  constexpr std::size_t sizes[] = {std::size_t{0}, fixed_size<std::tuple_element_t<I, Tuple>>()...};
  std::size_t total = 0;
  for (std::size_t s : sizes) {
    if (s == k_not_fixed) return k_not_fixed;
    total += s;
  }
  return total;
}

// Writes v as writer::value does; p has fixed_size<T>() bytes. Returns the
// end of what it wrote.
template <class T>
std::byte* put_fixed(std::byte* p, const T& v) noexcept {
  static_assert(fixed_size<T>() != k_not_fixed);
  if constexpr (is_pair<T>::value) {
    return put_fixed(put_fixed(p, v.first), v.second);
  } else if constexpr (is_tuple<T>::value || by_fields<T>) {
    auto put_all = [&p](const auto&... e) { ((p = put_fixed(p, e)), ...); };
    if constexpr (is_tuple<T>::value) {
      std::apply(put_all, v);
    } else {
      std::apply(put_all, tie_fields(v));
    }
    return p;
  } else if constexpr (std::is_same_v<T, bool>) {
    *p = std::byte{static_cast<unsigned char>(v ? 1 : 0)};
    return p + 1;
  } else {
    std::memcpy(p, &v, sizeof v);
    return p + sizeof v;
  }
}

}  // namespace detail

// A byte buffer to encode into: the thread's own reusable one (no
// allocation per message once it has grown), or a fresh one while that is
// in use (an encode nested in another, say from a serialize specialisation).
class scratch {
 public:
  scratch() noexcept : m_borrowed(!t_busy), m_v(m_borrowed ? t_bytes : m_own) {
    if (m_borrowed) t_busy = true;
    m_v.clear();
  }
  ~scratch() {
    if (!m_borrowed) return;
    // Kept up to 16 MiB: a freed large buffer comes back from the kernel
    // page by page on the next message (a 1 MiB round trip paid milliseconds).
    if (m_v.capacity() > (std::size_t{16} << 20)) std::vector<std::byte>().swap(m_v);
    t_busy = false;
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  std::vector<std::byte>& bytes() noexcept { return m_v; }

 private:
  static inline thread_local std::vector<std::byte> t_bytes;
  static inline thread_local bool t_busy = false;
  bool m_borrowed;
  std::vector<std::byte> m_own;
  std::vector<std::byte>& m_v;
};

// True for the types that may cross ranks.
template <class T>
concept serializable = detail::serializable_v<std::remove_cv_t<T>>();

template <class T>
void writer::value(const T& v) {
  static_assert(serializable<T>,
                "strata::mpi: this type cannot cross ranks: use a trivially copyable type without pointers, "
                "std::string, std::vector/std::optional/std::pair/std::tuple of those, a struct of those, or "
                "specialise strata::mpi::serialize<T>");
  if constexpr (detail::customised<T>) {
    serialize<T>::write(*this, v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    const std::uint64_t n = v.size();
    bytes(&n, sizeof n);
    bytes(v.data(), v.size());
  } else if constexpr (detail::is_vector<T>::value) {
    const std::uint64_t n = v.size();
    bytes(&n, sizeof n);
    using E = typename T::value_type;
    if constexpr (detail::plain_bytes<E> && !detail::customised<E> && !std::is_same_v<E, bool>) {
      bytes(v.data(), v.size() * sizeof(E));
    } else {
      for (const auto& e : v) value<E>(e);
    }
  } else if constexpr (detail::is_optional<T>::value) {
    const std::uint8_t has = v.has_value() ? 1 : 0;
    bytes(&has, 1);
    if (v) value(*v);
  } else if constexpr (detail::is_pair<T>::value) {
    value(v.first);
    value(v.second);
  } else if constexpr (detail::is_tuple<T>::value) {
    std::apply([this](const auto&... e) { (value(e), ...); }, v);
  } else if constexpr (detail::by_fields<T>) {
    std::apply([this](const auto&... e) { (value(e), ...); }, detail::tie_fields(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    const std::uint8_t b = v ? 1 : 0;
    bytes(&b, 1);
  } else {
    bytes(&v, sizeof v);
  }
}

template <class T>
T reader::value() {
  static_assert(serializable<T>, "strata::mpi: this type cannot cross ranks (see <strata/mpi/serialize.hpp>)");
  if constexpr (detail::customised<T>) {
    return serialize<T>::read(*this);
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::string s(count(1), '\0');
    bytes(s.data(), s.size());
    return s;
  } else if constexpr (detail::is_vector<T>::value) {
    using E = typename T::value_type;
    if constexpr (detail::plain_bytes<E> && !detail::customised<E> && !std::is_same_v<E, bool>) {
      T v(count(sizeof(E)));
      bytes(v.data(), v.size() * sizeof(E));
      return v;
    } else {
      const std::size_t n = count(1);  // every element takes at least one byte
      T v;
      v.reserve(n);
      for (std::size_t i = 0; i < n; ++i) v.push_back(value<E>());
      return v;
    }
  } else if constexpr (detail::is_optional<T>::value) {
    std::uint8_t has = 0;
    bytes(&has, 1);
    if (has > 1) throw decode_error("strata::mpi: corrupt optional flag");
    if (has == 0) return T{};
    return T{value<typename T::value_type>()};
  } else if constexpr (detail::is_pair<T>::value) {
    auto a = value<typename T::first_type>();
    auto b = value<typename T::second_type>();
    return T{std::move(a), std::move(b)};
  } else if constexpr (detail::is_tuple<T>::value) {
    return read_tuple<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (detail::by_fields<T>) {
    using F = detail::fields_t<T>;
    return read_fields<T, F>(std::make_index_sequence<std::tuple_size_v<F>>{});
  } else if constexpr (std::is_same_v<T, bool>) {
    // A bool has two valid representations; any other byte is a corrupt
    // message, not a value (loading it would be undefined behaviour).
    std::uint8_t b = 0;
    bytes(&b, 1);
    if (b > 1) throw decode_error("strata::mpi: corrupt bool");
    return b == 1;
  } else {
    static_assert(std::is_default_constructible_v<T>, "strata::mpi: a plain value must be default constructible");
    T v;
    bytes(&v, sizeof v);
    return v;
  }
}

}  // namespace strata::mpi
