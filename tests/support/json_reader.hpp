// Test support: reads JSON with nlohmann-json, so tests can check what
// strata-info --json and to_json() print by structure, not by substring.
// Throws std::runtime_error with the position on malformed input.
//
// nlohmann parses; the document is then copied into the plain
// strata::test::json tree the tests are written against (fields arr, num,
// str; operator[] that throws on a missing key or index; has(); ints()).
// nlohmann's own const operator[] is undefined behaviour for a missing key,
// so a failing check would crash instead of report.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
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
    try {
      return convert(nlohmann::json::parse(text));
    } catch (const nlohmann::json::parse_error& e) {
      throw std::runtime_error(std::string("json: ") + e.what());
    }
  }

 private:
  static json convert(const nlohmann::json& v) {
    json out;
    switch (v.type()) {
      case nlohmann::json::value_t::null:
      case nlohmann::json::value_t::discarded:
        break;
      case nlohmann::json::value_t::boolean:
        out.kind = json::type::boolean;
        out.b = v.get<bool>();
        break;
      case nlohmann::json::value_t::number_integer:
      case nlohmann::json::value_t::number_unsigned:
      case nlohmann::json::value_t::number_float:
        out.kind = json::type::number;
        out.num = v.get<double>();
        break;
      case nlohmann::json::value_t::string:
        out.kind = json::type::string;
        out.str = v.get<std::string>();
        break;
      case nlohmann::json::value_t::array:
        out.kind = json::type::array;
        for (const auto& x : v) out.arr.push_back(convert(x));
        break;
      case nlohmann::json::value_t::object:
        out.kind = json::type::object;
        for (const auto& [k, x] : v.items()) out.obj[k] = convert(x);
        break;
      case nlohmann::json::value_t::binary:
        throw std::runtime_error("json: binary values are not JSON text");
    }
    return out;
  }
};

}  // namespace strata::test
