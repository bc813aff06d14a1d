// Before -> fuse-reductions -> Expected, as plan text (tests/lower/plan_steps.h).
// fuse-reductions: a reduction computes its operand in its own traversal
// instead of reading it back from the workspace.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(FuseReductions, ComputesTheOperandInsideTheReductionsTraversal) {
  test::PlanStep step = test::lowerOnePass(R"(program sum_of_squares {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = mul %0, %0
  %2 = reduce.sum %1
  %3 = add %0, %2
  y[0:C] = %3
})",
                                           "fuse-reductions");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; materialize %1
;   traversal 1: len C, depth 0, masked full packets, inlined bodies; reduce %2
;   traversal 2: len C, depth 1, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; reduce %2
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.what, "1 reduction operands computed inside their reduction's traversal");
}

} // namespace
} // namespace lanejit
