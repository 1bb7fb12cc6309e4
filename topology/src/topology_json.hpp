// The machine as a JSON value: topology::to_json() prints it and
// placement_plan::to_json() nests it under "topology". Internal, so
// nlohmann-json stays out of the installed headers. ordered_json keeps the
// keys in the order written (source first, packages down to PUs, limits last),
// the order people read strata-info --json in.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include <strata/topology/topology.hpp>

namespace strata::detail {

nlohmann::ordered_json topology_json(const topology& t);

// j as compact JSON text. Strings that are not UTF-8 (an XML path, a value
// from the environment quoted in a note) get U+FFFD for the bad bytes
// instead of failing the whole report.
inline std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace strata::detail
