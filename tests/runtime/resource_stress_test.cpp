// Lock mode at the size: 64 resources x 10^6 tasks with 1 to 4
// random resources each, shadow counters inside every task.
#include <gtest/gtest.h>

#include "resource_exclusion.hpp"
#include "scale.hpp"

namespace {

using strata::test::submission;

TEST(LockModeStress, MillionTasksOver64ResourcesNeverConflict) { strata::test::exclusion_run(strata::test::scaled(1'000'000), 2); }

TEST(LockModeStress, MillionDetachedTasksOver64ResourcesNeverConflict) {
  strata::test::exclusion_run(strata::test::scaled(1'000'000), 2, submission::detached_in_frame);
}

TEST(LockModeStress, FourWorkersOversubscribed) {
  for (submission how : {submission::future_in_frame, submission::detached_in_frame, submission::future_on_heap}) {
    SCOPED_TRACE(static_cast<int>(how));
    strata::test::exclusion_run(strata::test::scaled(200'000), 4, how);
  }
}

}  // namespace
