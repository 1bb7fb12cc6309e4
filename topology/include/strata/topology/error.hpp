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

  // The message without its leading "strata: ", for wrapping in a more
  // specific message ("STRATA_TOPOLOGY='x' is invalid: <reason>").
  std::string reason() const {
    std::string m = what();
    return m.rfind("strata: ", 0) == 0 ? m.substr(8) : m;
  }
};

}  // namespace strata
