// placement_config::from_env(): every STRATA_* variable validated, none defaulted silently.
#include <strata/topology/config.hpp>
#include <strata/topology/ext/place_list.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace strata {
namespace {

const char* get(const char* name) { return std::getenv(name); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool looks_like_xml_path(const std::string& v) {
  return v.find('/') != std::string::npos || (v.size() > 4 && lower(v.substr(v.size() - 4)) == ".xml");
}

}  // namespace

namespace detail {
bool parse_flag(const char* name, const std::string& value) {
  const std::string v = lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw config_error(std::string("strata: ") + name + "='" + value +
                     "' is invalid; accepted: 1, true, yes, on or 0, false, no, off");
}
}  // namespace detail

const char* to_string(bind_policy b) noexcept {
  switch (b) {
    case bind_policy::close: return "close";
    case bind_policy::spread: return "spread";
    case bind_policy::none: return "none";
  }
  return "?";
}

placement_config placement_config::from_env() {
  placement_config c;
  if (const char* v = get("STRATA_NUM_WORKERS")) {
    c.workers = static_cast<unsigned>(parse_decimal(v, "STRATA_NUM_WORKERS", 1, 4096));
  }
  if (const char* v = get("STRATA_PLACES")) {
    parse_places(v, "STRATA_PLACES");  // syntax now; PUs are checked against the machine later
    c.places = v;
  }
  if (const char* v = get("STRATA_PROC_BIND")) {
    const std::string b = lower(v);
    if (b == "close") {
      c.bind = bind_policy::close;
    } else if (b == "spread") {
      c.bind = bind_policy::spread;
    } else if (b == "none") {
      c.bind = bind_policy::none;
    } else {
      throw config_error(std::string("strata: STRATA_PROC_BIND='") + v + "' is invalid; accepted: close, spread, none");
    }
  }
  if (const char* v = get("STRATA_TOPOLOGY")) {
    const std::string t = v;
    try {
      c.topology = looks_like_xml_path(t) ? topology::from_xml(t) : topology::synthetic(t);
    } catch (const config_error& e) {
      throw config_error(std::string("strata: STRATA_TOPOLOGY='") + t + "' is invalid: " + e.reason() +
                         "; accepted: a path to an XML file exported by lstopo (containing '/' or ending in .xml) "
                         "or an hwloc synthetic description such as 'pack:2 numa:2 l3:1 core:4 pu:2'");
    }
  }
  if (const char* v = get("STRATA_DISPLAY_AFFINITY")) c.display_affinity = detail::parse_flag("STRATA_DISPLAY_AFFINITY", v);
  if (const char* v = get("STRATA_OVERSUBSCRIBE")) c.oversubscribe = detail::parse_flag("STRATA_OVERSUBSCRIBE", v);
  if (const char* v = get("STRATA_DETERMINISTIC_SEED")) {
    c.deterministic_seed = parse_decimal(v, "STRATA_DETERMINISTIC_SEED", 0, ~0ull);
  }
  return c;
}

}  // namespace strata
