// strata::config_error: the one exception type for bad user input (environment
// values, place lists, topology descriptions, misuse of the configuration).
// Its message names what was wrong, the offending value and what is accepted.
#pragma once

#include <stdexcept>
#include <string>

namespace strata {

class config_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace strata
