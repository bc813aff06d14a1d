// Before -> fuse-outputs -> Expected, as plan text (tests/lower/plan_steps.h).
// fuse-outputs: writes and reductions of equal length and depth share one
// traversal; different depths stay apart (each needs the one before).
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(FuseOutputs, JoinsTwoHalvesOfOneOutput) {
  test::PlanStep step = test::lowerOnePass(R"(program rope {
  in x: f32[R, C]
  in cos: f32[R, C/2]
  in sin: f32[R, C/2]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = slice %0[0:C/2]
  %2 = load cos[0:C/2]
  %3 = mul %1, %2
  %4 = slice %0[C/2:C]
  %5 = load sin[0:C/2]
  %6 = mul %4, %5
  %7 = sub %3, %6
  y[0:C/2] = %7
  %8 = mul %1, %5
  %9 = mul %4, %2
  %10 = add %8, %9
  y[C/2:C] = %10
})",
                                           "fuse-outputs");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, masked full packets, inlined bodies; write y[0 +C/2]
;   traversal 1: len C/2, depth 0, masked full packets, inlined bodies; write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
;   alias cos / y: guarded (row staged when in place): in-place proofs are off
;   alias sin / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, masked full packets, inlined bodies; write y[0 +C/2] write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
;   alias cos / y: guarded (row staged when in place): in-place proofs are off
;   alias sin / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.what,
            "1 traversals joined others of equal length and depth (writes proved disjoint)");
}

TEST(FuseOutputs, KeepsTraversalsOfDifferentDepthsApart) {
  test::PlanStep step = test::lowerOnePass(R"(program masked_softmax {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = col[0:C]
  %1 = row
  %2 = dim C
  %3 = mod %1, %2
  %4 = le %0, %3
  %5 = load x[0:C]
  %6 = const f32 -inf
  %7 = select %4, %5, %6
  %8 = reduce.max %7
  %9 = sub %5, %8
  %10 = exp %9
  %11 = const f32 -0
  %12 = select %4, %10, %11
  %13 = reduce.sum %12
  %14 = div %10, %13
  %15 = const f32 0
  %16 = select %4, %14, %15
  y[0:C] = %16
})",
                                           "fuse-outputs");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; reduce %8
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; reduce %13
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; reduce %8
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; reduce %13
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.what,
            "0 traversals joined others of equal length and depth (writes proved disjoint)");
}

} // namespace
} // namespace lanejit
