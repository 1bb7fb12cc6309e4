// Errors of the runtime API.
#pragma once

#include <stdexcept>

#include <strata/topology/error.hpp>

namespace strata {

// The runtime cannot take the request (it is shutting down or shut down).
class runtime_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The API was used in a way that could only deadlock or corrupt state (a
// task waiting on its own group, wait_idle from inside a task, a target
// worker that does not exist).
class usage_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace strata
