// Test support: readable names for TEST_P cases: "case_7" for a table's
// rows, "2_workers" for worker counts, a row's own `name` for tables of
// submission modes.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace strata::test {

struct case_name {
  template <class Info>
  std::string operator()(const Info& info) const {
    return "case_" + std::to_string(info.index);
  }
};

// A TEST_P over worker counts: "1_worker", "2_workers".
struct workers_name {
  template <class Info>
  std::string operator()(const Info& info) const {
    return std::to_string(info.param) + (info.param == 1 ? "_worker" : "_workers");
  }
};

// A TEST_P over rows that carry their name (letters, digits and '_').
struct row_name {
  template <class Info>
  std::string operator()(const Info& info) const {
    return info.param.name;
  }
};

}  // namespace strata::test
