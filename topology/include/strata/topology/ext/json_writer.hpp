// A small streaming JSON writer. Its last user is runtime_stats::to_json()
// (runtime/src/stats.cpp); the other reports and strata-bench write JSON with
// nlohmann-json, and this header goes once stats.cpp does too.
//
//   json_writer w;
//   w.begin_object(); w.key("workers"); w.value(4); w.end_object();
//   w.str();  // {"workers":4}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class json_writer {
 public:
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  void key(std::string_view k) {
    separate();
    quote(k);
    m_out += ':';
    m_after_key = true;
  }
  void value(std::string_view s) { separate(); quote(s); }
  void value(const char* s) { value(std::string_view{s}); }
  void value(const std::string& s) { value(std::string_view{s}); }
  void value(bool b) { separate(); m_out += b ? "true" : "false"; }
  void value(int v) { separate(); m_out += std::to_string(v); }
  void value(long v) { separate(); m_out += std::to_string(v); }
  void value(long long v) { separate(); m_out += std::to_string(v); }
  void value(unsigned v) { separate(); m_out += std::to_string(v); }
  void value(unsigned long v) { separate(); m_out += std::to_string(v); }
  void value(unsigned long long v) { separate(); m_out += std::to_string(v); }
  void value(double v);
  void null() { separate(); m_out += "null"; }
  // Inserts an already serialised JSON value (from another to_json()).
  void raw(std::string_view json) { separate(); m_out += json; }

  template <class Int>
  void int_array(const std::vector<Int>& v) {
    begin_array();
    for (auto x : v) value(x);
    end_array();
  }

  const std::string& str() const noexcept { return m_out; }

 private:
  void open(char c) {
    separate();
    m_out += c;
    m_first.push_back(true);
  }
  void close(char c) {
    m_out += c;
    m_first.pop_back();
  }
  void separate() {
    if (m_after_key) {
      m_after_key = false;
      return;
    }
    if (!m_first.empty()) {
      if (!m_first.back()) m_out += ',';
      m_first.back() = false;
    }
  }
  void quote(std::string_view s);

  std::string m_out;
  std::vector<bool> m_first;  // per open container: no element written yet
  bool m_after_key = false;
};

}  // namespace strata
