// Lock mode at the size: 64 resources x 10^6 tasks with 1 to 4
// random resources each, shadow counters inside every task.
#include <gtest/gtest.h>

#include "resource_exclusion.hpp"
#include "scale.hpp"

namespace {

TEST(LockModeStress, MillionTasksOver64ResourcesNeverConflict) { strata::test::exclusion_run(strata::test::scaled(1'000'000), 2); }

TEST(LockModeStress, FourWorkersOversubscribed) { strata::test::exclusion_run(strata::test::scaled(200'000), 4); }

}  // namespace
