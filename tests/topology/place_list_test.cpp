// Place-list grammar: what parses to what, and that every bad list is
// rejected with a message naming the source, the value and the accepted forms.
#include <gtest/gtest.h>
#include <strata/topology/error.hpp>
#include <strata/topology/ext/place_list.hpp>

#include <string>

#include "param_name.hpp"
#include <vector>

namespace {

using strata::config_error;
using strata::parse_places;
using strata::place_kind;
using places_t = std::vector<std::vector<int>>;

TEST(PlaceList, AbstractKinds) {
  EXPECT_EQ(parse_places("threads", "T").kind, place_kind::threads);
  EXPECT_EQ(parse_places("cores", "T").kind, place_kind::cores);
  EXPECT_EQ(parse_places("CORES", "T").kind, place_kind::cores);
  EXPECT_EQ(parse_places("l3", "T").kind, place_kind::l3);
  EXPECT_EQ(parse_places("ll_caches", "T").kind, place_kind::l3);
  EXPECT_EQ(parse_places("numa", "T").kind, place_kind::numa);
  EXPECT_EQ(parse_places("numa_domains", "T").kind, place_kind::numa);
  EXPECT_EQ(parse_places(" sockets ", "T").kind, place_kind::sockets);
  const auto c = parse_places("cores(4)", "T");
  EXPECT_EQ(c.kind, place_kind::cores);
  ASSERT_TRUE(c.count.has_value());
  EXPECT_EQ(*c.count, 4u);
  EXPECT_FALSE(parse_places("numa", "T").count.has_value());
}

struct good_case {
  const char* text;
  places_t expected;
};

void PrintTo(const good_case& c, std::ostream* os) { *os << "'" << c.text << "'"; }

class PlaceListGood : public ::testing::TestWithParam<good_case> {};

TEST_P(PlaceListGood, ParsesTo) {
  const auto spec = parse_places(GetParam().text, "STRATA_PLACES");
  EXPECT_EQ(spec.kind, place_kind::explicit_list);
  EXPECT_EQ(spec.places, GetParam().expected) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Explicit, PlaceListGood,
    ::testing::Values(good_case{"{0:4}:2:4", {{0, 1, 2, 3}, {4, 5, 6, 7}}},
                      good_case{"0-3,8-11", {{0}, {1}, {2}, {3}, {8}, {9}, {10}, {11}}},
                      good_case{"{0,1},{2,3}", {{0, 1}, {2, 3}}},
                      good_case{"{0:2:8}", {{0, 8}}},
                      good_case{"{0-1}:3:2", {{0, 1}, {2, 3}, {4, 5}}},
                      good_case{"{6}:3:-2", {{6}, {4}, {2}}},
                      good_case{"5", {{5}}},
                      good_case{"0:4:2", {{0}, {2}, {4}, {6}}},
                      good_case{"{0},{1}", {{0}, {1}}}),
    strata::test::case_name{});

struct bad_case {
  const char* text;
  const char* why;  // a fragment the message must contain
};

void PrintTo(const bad_case& c, std::ostream* os) { *os << "'" << c.text << "'"; }

class PlaceListBad : public ::testing::TestWithParam<bad_case> {};

TEST_P(PlaceListBad, RejectedWithClearMessage) {
  try {
    (void)parse_places(GetParam().text, "STRATA_PLACES");
    FAIL() << "accepted bad place list '" << GetParam().text << "'";
  } catch (const config_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("STRATA_PLACES"), std::string::npos) << m;
    EXPECT_NE(m.find(GetParam().why), std::string::npos) << m;
    EXPECT_NE(m.find("accepted"), std::string::npos) << m;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, PlaceListBad,
    ::testing::Values(bad_case{"", "empty"}, bad_case{"   ", "empty"}, bad_case{"{0:4", "'}'"},
                      bad_case{"0:4}", "unbalanced '}'"}, bad_case{"{}", "empty place"},
                      bad_case{"{{0}}", "PU number"}, bad_case{"{0,{1}}", "PU number"},
                      bad_case{"3-1", "descending"}, bad_case{"-1", "negative"},
                      bad_case{"{0:0}", "at least 1"}, bad_case{"{0:-2}", "negative interval"},
                      bad_case{"99999999999999999999", "out of range"}, bad_case{"{0}:2:-4", "outside"},
                      bad_case{"cpus", "unknown place kind 'cpus'"}, bad_case{"cores(0)", "out of range"},
                      bad_case{"cores(x)", "not a whole number"}, bad_case{"cores(4", "unbalanced '('"},
                      bad_case{"!{0}", "exclusion"}, bad_case{"{!0}", "exclusion"}, bad_case{"0,,1", "PU number"},
                      bad_case{"0,", "PU number"}, bad_case{"{0;1}", "unexpected ';'"},
                      bad_case{"{0,1},{1,2}", "PU 1 appears more than once"}, bad_case{"4x", "unexpected 'x'"},
                      bad_case{"0-", "PU number"}, bad_case{"{0}:", "interval length"},
                      bad_case{"0 1", "unexpected ' '"}),
    strata::test::case_name{});

TEST(Decimal, AcceptsAndRejects) {
  EXPECT_EQ(strata::parse_decimal("42", "X", 1, 100), 42u);
  EXPECT_EQ(strata::parse_decimal("18446744073709551615", "X", 0, ~0ull), ~0ull);
  for (const char* bad : {"", "0", "-1", "+1", "4x", " 4", "101", "18446744073709551616", "99999999999999999999"}) {
    EXPECT_THROW((void)strata::parse_decimal(bad, "X", 1, 100), config_error) << bad;
  }
}

}  // namespace
