// Before -> bound-masked-columns -> Expected, as plan text (tests/lower/plan_steps.h).
// bound-masked-columns: traversals whose every reduction and write selects
// on one row-uniform `col <= u` stop computing at u.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(BoundMaskedColumns, StopsCausalTraversalsAtTheRowsLimit) {
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
                                           "bound-masked-columns");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; reduce %8
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; reduce %13
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; live columns to %3 inclusive; reduce %8
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; live columns to %3 inclusive; reduce %13
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.what, "3 traversals stop at a row-uniform column bound");
}

} // namespace
} // namespace lanejit
