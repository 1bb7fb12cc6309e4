// Parsing of place lists (STRATA_PLACES / config.places), after OMP_PLACES.
//
//   abstract:  threads | cores | l3 | numa | sockets, optionally "(n)": the first n places
//              (ll_caches, numa_domains are accepted as OpenMP's spellings of l3, numa)
//   explicit:  a comma list of places; a place is {res,...} where res is a PU
//              number, a range a-b, or an interval lower:len[:stride]; a place
//              may be repeated with place:len[:stride] ({0:4}:2:4 = {0-3},{4-7});
//              bare PU numbers and ranges (0-3,8-11) are one place per PU.
// PU numbers are OS indices. Exclusion ('!') is not supported and says so.
// Syntax errors throw config_error; whether the PUs exist is checked when a
// placement is computed on a machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

enum class place_kind { threads, cores, l3, numa, sockets, explicit_list };

struct place_spec {
  place_kind kind = place_kind::cores;
  std::optional<unsigned> count;            // abstract kinds: "(n)"
  std::vector<std::vector<int>> places;     // explicit_list: OS PU indices per place
};

// origin names the source in error messages ("STRATA_PLACES", "config.places").
place_spec parse_places(std::string_view text, std::string_view origin);

// Strict decimal parsing shared by every STRATA_* variable: digits only, no
// sign, no spaces, within [min, max]; errors name origin and the accepted range.
unsigned long long parse_decimal(std::string_view text, std::string_view origin, unsigned long long min,
                                 unsigned long long max);

}  // namespace strata
