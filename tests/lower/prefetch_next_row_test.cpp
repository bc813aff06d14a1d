// Before -> prefetch-next-row -> Expected, as plan text (tests/lower/plan_steps.h).
// prefetch-next-row: in a row of two or more traversals, the traversal
// before the last prefetches the next row's row-tensor inputs in large
// calls; rows of one traversal are left alone.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(PrefetchNextRow, MarksTheTraversalBeforeTheLastOfALayerNorm) {
  CompileOptions o;
  o.prefetch_min_kib = 2048;
  test::PlanStep step = test::lowerOnePass(R"(program layernorm {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = reduce.mean %0
  %2 = sub %0, %1
  %3 = mul %2, %2
  %4 = reduce.mean %3
  %5 = rsqrt %4
  %6 = mul %2, %5
  y[0:C] = %6
})",
                                           "prefetch-next-row", o);
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %1
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; reduce %4
;   traversal 2: len C, depth 2, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %1
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; prefetch next row from 2097152 bytes of row data, 2048 per row; reduce %4
;   traversal 2: len C, depth 2, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "traversal 1 prefetches the next row's inputs in calls of at least "
                       "2097152 bytes of row data, rows of at least 2048 bytes");
}

// RMSNorm's two traversals: the reduction is the one before the last, and
// the row's first, so only long rows prefetch (its loads stream the row).
TEST(PrefetchNextRow, MarksTheReductionOfATwoTraversalRow) {
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
                                           "prefetch-next-row", CompileOptions{});
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; prefetch next row from 16777216 bytes of row data, 16384 per row; reduce %2
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
}

// One traversal streams through its rows in order: nothing is marked
// (a column vector keeps the rows from being flattened into one).
TEST(PrefetchNextRow, LeavesRowsOfOneTraversal) {
  test::PlanStep step = test::lowerOnePass(R"(program scale {
  in x: f32[R, C]
  in g: f32[C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = load g[0:C]
  %2 = mul %0, %1
  y[0:C] = %2
})",
                                           "prefetch-next-row", CompileOptions{});
  EXPECT_EQ(step.after.find("prefetch"), std::string::npos) << step.after;
  EXPECT_EQ(step.after, step.before);
  EXPECT_EQ(step.what, "rows of one traversal: nothing to prefetch ahead of");
}

} // namespace
} // namespace lanejit
