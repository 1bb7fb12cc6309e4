// Test support: readable names for table-driven TEST_P cases ("case_7").
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

}  // namespace strata::test
