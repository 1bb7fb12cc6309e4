// Test support: a small strict JSON reader, so tests can check what
// strata-info --json and to_json() print by structure, not by substring.
// Throws std::runtime_error with the position on malformed input.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata::test {

struct json {
  enum class type { null, boolean, number, string, array, object } kind = type::null;
  bool b = false;
  double num = 0;
  std::string str;
  std::vector<json> arr;
  std::map<std::string, json> obj;

  const json& operator[](const std::string& k) const {
    auto it = obj.find(k);
    if (kind != type::object || it == obj.end()) throw std::runtime_error("json: no key '" + k + "'");
    return it->second;
  }
  const json& operator[](std::size_t i) const {
    if (kind != type::array || i >= arr.size()) throw std::runtime_error("json: no index " + std::to_string(i));
    return arr[i];
  }
  bool has(const std::string& k) const { return kind == type::object && obj.count(k) != 0; }
  std::size_t size() const { return kind == type::array ? arr.size() : obj.size(); }
  int as_int() const { return static_cast<int>(num); }
  std::vector<int> ints() const {
    std::vector<int> v;
    for (const auto& x : arr) v.push_back(x.as_int());
    return v;
  }
};

class json_reader {
 public:
  static json parse(std::string_view text) {
    json_reader r(text);
    json v = r.value();
    r.ws();
    if (r.m_pos != text.size()) r.fail("trailing characters");
    return v;
  }

 private:
  explicit json_reader(std::string_view t) : m_t(t) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("json: " + what + " at position " + std::to_string(m_pos));
  }
  void ws() {
    while (m_pos < m_t.size() && std::isspace(static_cast<unsigned char>(m_t[m_pos]))) ++m_pos;
  }
  char peek() {
    ws();
    return m_pos < m_t.size() ? m_t[m_pos] : '\0';
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++m_pos;
  }
  bool literal(std::string_view w) {
    if (m_t.substr(m_pos, w.size()) != w) return false;
    m_pos += w.size();
    return true;
  }
  std::string string() {
    expect('"');
    std::string s;
    while (m_pos < m_t.size() && m_t[m_pos] != '"') {
      char c = m_t[m_pos++];
      if (c == '\\') {
        if (m_pos >= m_t.size()) fail("bad escape");
        char e = m_t[m_pos++];
        switch (e) {
          case 'n': s += '\n'; break;
          case 't': s += '\t'; break;
          case 'r': s += '\r'; break;
          case 'u': s += '?'; m_pos += 4; break;
          default: s += e;
        }
      } else {
        s += c;
      }
    }
    if (m_pos >= m_t.size()) fail("unterminated string");
    ++m_pos;
    return s;
  }
  json value() {
    json v;
    const char c = peek();
    if (c == '{') {
      ++m_pos;
      v.kind = json::type::object;
      if (peek() == '}') {
        ++m_pos;
        return v;
      }
      do {
        std::string k = string();
        expect(':');
        v.obj[k] = value();
      } while (peek() == ',' && ++m_pos);
      expect('}');
    } else if (c == '[') {
      ++m_pos;
      v.kind = json::type::array;
      if (peek() == ']') {
        ++m_pos;
        return v;
      }
      do {
        v.arr.push_back(value());
      } while (peek() == ',' && ++m_pos);
      expect(']');
    } else if (c == '"') {
      v.kind = json::type::string;
      v.str = string();
    } else if (literal("true")) {
      v.kind = json::type::boolean;
      v.b = true;
    } else if (literal("false")) {
      v.kind = json::type::boolean;
    } else if (literal("null")) {
    } else {
      const char* begin = m_t.data() + m_pos;
      char* end = nullptr;
      v.num = std::strtod(begin, &end);
      if (end == begin) fail("unexpected character");
      v.kind = json::type::number;
      m_pos += static_cast<std::size_t>(end - begin);
    }
    return v;
  }
  std::string_view m_t;
  std::size_t m_pos = 0;
};

}  // namespace strata::test
