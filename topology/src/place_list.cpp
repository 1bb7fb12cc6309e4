// Place-list parser (grammar in strata/topology/ext/place_list.hpp).
#include <strata/topology/error.hpp>
#include <strata/topology/ext/place_list.hpp>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace strata {
namespace {

constexpr long long k_max_pu = 1 << 20;  // far beyond any machine; catches garbage
constexpr const char* k_accepted =
    "accepted: threads|cores|l3|numa|sockets, optionally with a count such as cores(4), or an explicit "
    "list of OS PU numbers such as '{0:4}:2:4', '{0,1},{2,3}' or '0-3,8-11'";

class parser {
 public:
  parser(std::string_view text, std::string_view origin) : m_text(text), m_origin(origin) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw config_error("strata: " + std::string(m_origin) + "='" + std::string(m_text) + "' is invalid: " + what +
                       " (at position " + std::to_string(m_pos) + "); " + k_accepted);
  }

  bool done() const { return m_pos >= m_text.size(); }
  char peek() const { return done() ? '\0' : m_text[m_pos]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++m_pos;
    return true;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) fail(done() ? std::string("unexpected end, expected ") + what
                             : std::string("unexpected '") + peek() + "', expected " + what);
  }

  long long number(const char* what) {
    const std::size_t start = m_pos;
    bool negative = eat('-');
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(std::string("expected ") + what);
    long long v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (m_text[m_pos++] - '0');
      if (v > k_max_pu) {
        m_pos = start;
        fail(std::string(what) + " out of range (at most " + std::to_string(k_max_pu) + ")");
      }
    }
    return negative ? -v : v;
  }
  long long pu_number() {
    if (peek() == '-') fail("negative PU number");
    return number("a PU number");
  }
  // ":len[:stride]" after a start; returns {len, stride}.
  std::pair<long long, long long> interval() {
    if (peek() == '-') fail("negative interval length");
    const long long len = number("an interval length");
    if (len < 1) fail("interval length must be at least 1");
    long long stride = 1;
    if (eat(':')) stride = number("an interval stride");
    return {len, stride};
  }

  // res := num [ '-' num | ':' len [':' stride] ]
  void resource(std::vector<int>& place) {
    if (peek() == '!') fail("exclusion ('!') is not supported");
    const long long first = pu_number();
    if (eat('-')) {
      const long long last = pu_number();
      if (last < first) fail("range " + std::to_string(first) + "-" + std::to_string(last) + " is descending");
      for (long long p = first; p <= last; ++p) push_checked(place, p);
    } else if (eat(':')) {
      auto [len, stride] = interval();
      for (long long i = 0; i < len; ++i) push_checked(place, first + i * stride);
    } else {
      push_checked(place, first);
    }
  }

  // Every PU of the list passes here once, so a repeat is refused where it
  // is written and the work is bounded: a list can name at most k_max_pu + 1
  // PUs before one repeats, however large its intervals and replications
  // ("{0:44545}:44545" would otherwise build two billion entries).
  void push_checked(std::vector<int>& place, long long pu) {
    if (pu < 0 || pu > k_max_pu) fail("interval reaches PU " + std::to_string(pu) + ", outside 0.." + std::to_string(k_max_pu));
    if (m_seen.empty()) m_seen.resize(static_cast<std::size_t>(k_max_pu) + 1);
    if (m_seen[static_cast<std::size_t>(pu)]) fail("PU " + std::to_string(pu) + " appears more than once");
    m_seen[static_cast<std::size_t>(pu)] = true;
    place.push_back(static_cast<int>(pu));
  }

  std::vector<std::vector<int>> list() {
    std::vector<std::vector<int>> places;
    if (done()) fail("empty place list");
    do {
      if (peek() == '!') fail("exclusion ('!') is not supported");
      if (eat('{')) {
        std::vector<int> place;
        if (peek() == '}') fail("empty place '{}'");
        do {
          resource(place);
        } while (eat(','));
        if (peek() == '{') fail("nested '{'");
        expect('}', "'}' closing the place");
        if (eat(':')) {  // place:len[:stride] replicates the place
          auto [len, stride] = interval();
          const std::size_t base = places.size();
          places.push_back(std::move(place));  // copy 0 is the place itself, already counted
          for (long long i = 1; i < len; ++i) {
            std::vector<int> shifted;
            for (int pu : places[base]) push_checked(shifted, pu + i * stride);
            places.push_back(std::move(shifted));
          }
        } else {
          places.push_back(std::move(place));
        }
      } else if (peek() == '}') {
        fail("unbalanced '}'");
      } else {
        std::vector<int> bare;  // one place per PU
        resource(bare);
        for (int pu : bare) places.push_back({pu});
      }
    } while (eat(','));
    if (peek() == '}') fail("unbalanced '}'");
    if (!done()) fail(std::string("unexpected '") + peek() + "'");
    return places;
  }

  std::size_t m_pos = 0;

 private:
  std::string_view m_text;
  std::string_view m_origin;
  std::vector<bool> m_seen;  // PUs named so far, indexed by OS number
};

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\n");
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

unsigned long long parse_decimal(std::string_view text, std::string_view origin, unsigned long long min,
                                 unsigned long long max) {
  // The message is built only when the value is refused.
  const auto refuse = [&](const char* what) {
    std::string m = "strata: ";
    m.append(origin).append("='").append(text).append("' ").append(what);
    m += "; accepted: a whole number from " + std::to_string(min);
    m += " to " + std::to_string(max);
    return config_error(m);
  };
  if (text.empty()) throw refuse("is empty");
  unsigned long long v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) throw refuse("is not a whole number");
    if (v > (max - static_cast<unsigned long long>(c - '0')) / 10) throw refuse("is out of range");
    v = v * 10 + static_cast<unsigned long long>(c - '0');
  }
  if (v < min) throw refuse("is out of range");
  return v;
}

place_spec parse_places(std::string_view text, std::string_view origin) {
  const std::string t = trim(text);
  parser p(t, origin);
  if (t.empty()) p.fail("empty place list");

  // Abstract names, optionally with "(n)".
  std::string name = t;
  std::optional<unsigned> count;
  if (const auto open = t.find('('); open != std::string::npos && std::isalpha(static_cast<unsigned char>(t[0]))) {
    if (t.back() != ')') {
      p.m_pos = t.size();
      p.fail("unbalanced '(' in place count");
    }
    name = t.substr(0, open);
    const std::string inner = t.substr(open + 1, t.size() - open - 2);
    count = static_cast<unsigned>(parse_decimal(inner, std::string(origin) + " place count", 1, 1u << 20));
  }
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::pair<const char*, place_kind> k_names[] = {
      {"threads", place_kind::threads}, {"cores", place_kind::cores},   {"l3", place_kind::l3},
      {"ll_caches", place_kind::l3},    {"numa", place_kind::numa},     {"numa_domains", place_kind::numa},
      {"sockets", place_kind::sockets}, {"packages", place_kind::sockets}};
  for (const auto& [n, kind] : k_names) {
    if (lower == n) return {kind, count, {}};
  }
  if (std::isalpha(static_cast<unsigned char>(t[0]))) p.fail("unknown place kind '" + name + "'");

  return {place_kind::explicit_list, std::nullopt, p.list()};
}

}  // namespace strata
