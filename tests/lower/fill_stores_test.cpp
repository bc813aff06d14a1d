// Before -> fill-stores -> Expected, as plan text (tests/lower/plan_steps.h).
// fill-stores: fills past a column bound stay vector stores (no memset).
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(FillStores, MarksPlansWithFills) {
  test::PlanStep step = test::lowerOnePass(R"(program causal_copy {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = col[0:C]
  %1 = row
  %2 = dim C
  %3 = mod %1, %2
  %4 = le %0, %3
  %5 = load x[0:C]
  %6 = const f32 0
  %7 = select %4, %5, %6
  y[0:C] = %7
})",
                                           "fill-stores");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   fills are vector stores, not memset calls
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "1 traversals fill past their bound with vector stores");
}

TEST(FillStores, NoChangeWithoutFills) {
  test::PlanStep step = test::lowerOnePass(R"(program copy {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  y[0:C] = %0
})",
                                           "fill-stores");
  EXPECT_EQ(step.before, step.after);
}

} // namespace
} // namespace lanejit
