// Before -> stream-stores -> Expected, as plan text (tests/lower/plan_steps.h).
// stream-stores: write-only traversals store full packets non-temporally in
// large calls; traversals with reductions keep normal stores.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(StreamStores, MarksTheWriteOnlyTraversalOfANorm) {
  CompileOptions o;
  o.stream_stores = true;
  o.stream_min_kib = 1024;
  test::PlanStep step = test::lowerOnePass(R"(program rmsnorm {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = mul %0, %0
  %2 = reduce.mean %1
  %3 = rsqrt %2
  %4 = mul %0, %3
  y[0:C] = %4
})",
                                           "stream-stores", o);
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %2
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %2
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; non-temporal stores from 1048576 bytes per output; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "1 write-only traversals store full packets non-temporally in calls "
                       "writing at least 1048576 bytes per output");
}

// A traversal that also reduces keeps its packet boundaries (they fix the
// sum's association), and masked full packets have no aligned stores.
TEST(StreamStores, LeavesTraversalsThatReduceOrMaskEveryPacket) {
  const char *fused = R"(program sum_and_copy {
  in x: f32[R, C]
  out y: f32[R, C]
  out s: f32[R, 1]
  %0 = load x[0:C]
  %1 = reduce.sum %0
  y[0:C] = %0
  s[0:1] = %1
})";
  CompileOptions on;
  on.stream_stores = true;
  test::PlanStep step = test::lowerOnePass(fused, "stream-stores", on);
  EXPECT_EQ(step.before.find("non-temporal"), std::string::npos) << step.before;
  EXPECT_NE(step.after.find("reduce %1"), std::string::npos) << step.after;
  EXPECT_EQ(step.after.find("non-temporal"), std::string::npos) << step.after;

  CompileOptions masked;
  masked.specialize_full_packets = false;
  masked.stream_stores = true;
  step = test::lowerOnePass(R"(program scale {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = const f32 2
  %2 = mul %0, %1
  y[0:C] = %2
})",
                            "stream-stores", masked);
  EXPECT_EQ(step.after.find("non-temporal"), std::string::npos) << step.after;
  EXPECT_EQ(step.what, "0 write-only traversals store full packets non-temporally in calls "
                       "writing at least 4194304 bytes per output");
}

} // namespace
} // namespace lanejit
