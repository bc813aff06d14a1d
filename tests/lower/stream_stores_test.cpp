// stream-stores: write-only traversals store full packets non-temporally in
// large calls; traversals with reductions keep normal stores. Its Before ->
// Expected cases are tests/lower/cases/stream-stores/; this one checks that
// no plan is marked, whatever else the plans say.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

// A traversal that also reduces keeps its packet boundaries (they fix the
// sum's association), and masked full packets have no aligned stores.
TEST(StreamStores, LeavesTraversalsThatReduceOrMaskEveryPacket) {
  CompileOptions on;
  on.stream_stores = true;
  test::PlanStep step = test::lowerOnePass(test::planProgram("sum_and_copy"), "stream-stores", on);
  EXPECT_EQ(step.before.find("non-temporal"), std::string::npos) << step.before;
  EXPECT_NE(step.after.find("reduce %1"), std::string::npos) << step.after;
  EXPECT_EQ(step.after.find("non-temporal"), std::string::npos) << step.after;

  CompileOptions masked;
  masked.specialize_full_packets = false;
  masked.stream_stores = true;
  step = test::lowerOnePass(test::planProgram("scale"), "stream-stores", masked);
  EXPECT_EQ(step.after.find("non-temporal"), std::string::npos) << step.after;
  EXPECT_EQ(step.what, "0 write-only traversals store full packets non-temporally in calls "
                       "writing at least 4194304 bytes per output");
}

} // namespace
} // namespace lanejit
