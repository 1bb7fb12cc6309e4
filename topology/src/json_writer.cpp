#include <strata/topology/ext/json_writer.hpp>

#include <cmath>
#include <cstdio>

namespace strata {

void json_writer::value(double v) {
  separate();
  if (!std::isfinite(v)) {  // JSON has no NaN or infinity
    m_out += "null";
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  m_out += buf;
}

void json_writer::quote(std::string_view s) {
  m_out += '"';
  for (char c : s) {
    switch (c) {
      case '"': m_out += "\\\""; break;
      case '\\': m_out += "\\\\"; break;
      case '\n': m_out += "\\n"; break;
      case '\r': m_out += "\\r"; break;
      case '\t': m_out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          m_out += buf;
        } else {
          m_out += c;
        }
    }
  }
  m_out += '"';
}

}  // namespace strata
