#include "harness/json_output.hpp"

#include <string>

namespace strata_bench {
namespace {

using nlohmann::ordered_json;

// Text that is not UTF-8 (a path, an exception message) is written with
// U+FFFD in place of the bad bytes rather than failing the whole file.
std::string scalar_text(const ordered_json& v) {
  return v.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

bool holds_objects(const ordered_json& v) {
  return v.is_array() && !v.empty() && v.front().is_object();
}

// indent: the indentation of the line v starts on.
void append(std::string& out, const ordered_json& v, const std::string& indent) {
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, item] : v.items()) {
      out += first ? "" : ", ";
      first = false;
      out += scalar_text(key);
      out += ": ";
      append(out, item, indent);
    }
    out += '}';
  } else if (holds_objects(v)) {
    const std::string inner = indent + "  ";
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      out += i == 0 ? "\n" : ",\n";
      out += inner;
      append(out, v[i], inner);
    }
    out += ']';
  } else if (v.is_array()) {
    out += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      out += i == 0 ? "" : ", ";
      append(out, v[i], indent);
    }
    out += ']';
  } else {
    out += scalar_text(v);
  }
}

}  // namespace

void write_json_lines(std::ostream& out, const ordered_json& records) {
  std::string text = "[";
  for (std::size_t i = 0; i < records.size(); ++i) {
    text += i == 0 ? "\n  " : ",\n  ";
    append(text, records[i], "  ");
  }
  text += "\n]\n";
  out << text;
}

}  // namespace strata_bench
