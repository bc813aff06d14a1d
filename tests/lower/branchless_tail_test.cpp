// Before -> branchless-tail -> Expected, as plan text (tests/lower/plan_steps.h).
// branchless-tail: max/min tails join accumulator 0; a sum's tail joins its
// accumulator by lane masks when K <= 4 and the traversal has no column bound.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

const char *kLayerNorm = R"(program layernorm {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = reduce.mean %0
  %2 = sub %0, %1
  %3 = mul %2, %2
  %4 = reduce.max %3
  %5 = div %2, %4
  y[0:C] = %5
})";

TEST(BranchlessTail, SumTailsByMasksAtFourAccumulators) {
  test::PlanStep step = test::lowerOnePass(kLayerNorm, "branchless-tail");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %1
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; reduce %4
;   traversal 2: len C, depth 2, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   max/min tails join accumulator 0
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; sum tail by lane masks; reduce %1
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; reduce %4
;   traversal 2: len C, depth 2, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "max/min tails join accumulator 0; 1 of 2 reducing traversals add a sum "
                       "tail by lane masks");
}

TEST(BranchlessTail, NoMasksWithMoreThanFourAccumulators) {
  test::PlanStep step = test::lowerOnePass(kLayerNorm, "branchless-tail", {}, 8);
  EXPECT_EQ(step.after, R"(; plan: W=8, 8 accumulators per reduction, guards hoisted
;   max/min tails join accumulator 0
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %1
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; reduce %4
;   traversal 2: len C, depth 2, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
}

TEST(BranchlessTail, NoChangeWithoutReductions) {
  test::PlanStep step = test::lowerOnePass(R"(program scale {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = const f32 2
  %2 = mul %0, %1
  y[0:C] = %2
})",
                                           "branchless-tail");
  EXPECT_EQ(step.before, step.after);
  EXPECT_EQ(step.what, "no reduction has more than one accumulator");
}

} // namespace
} // namespace lanejit
