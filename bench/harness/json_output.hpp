// The layout of strata-bench's JSON files: an array of records, one record
// per line, so a file reads and diffs line by line; a list of objects inside
// a record (the workers of a placement report) gets one line per object.
// Items are separated by ", " and ": ". nlohmann::json quotes the strings
// and prints the numbers (shortest text that reads back to the same double;
// NaN and infinity become null).
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>

namespace strata_bench {

// records: a JSON array. Writes "[", the records, "]" and a line break.
void write_json_lines(std::ostream& out, const nlohmann::ordered_json& records);

}  // namespace strata_bench
