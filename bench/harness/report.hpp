// Output of strata-bench: the human table (stdout), the JSON array (--json)
// and the one-line record format the omp-llvm helper sends to its parent.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/measure.hpp"

namespace strata_bench {

// One line per record: bench, params, runtime, threads, median ms, min, max,
// check, speedup vs serial (serial median / this median, same benchmark),
// rate ("41.2 GB/s", "0.11 Mmsg/s": two decimals below 10; "-" for
// benchmarks without one).
void print_table(std::ostream& out, const std::vector<record>& records);

// A JSON array, one object per record:
// {"bench","runtime","threads","params","median_s","min_s","max_s","reps","check"}
// (times are null when no timed run completed), plus "rate" and "rate_unit"
// for records that have a rate.
void write_json(std::ostream& out, const std::vector<record>& records);

// The helper protocol: "strata-bench-record" and the record's fields,
// tab-separated, times and rate with 17 significant digits.
std::string encode_record(const record& r);
std::optional<record> decode_record(std::string_view line);

// A short progress line for stderr.
std::string progress_line(const record& r);

}  // namespace strata_bench
