// Before -> materialize-or-recompute -> Expected, as plan text
// (tests/lower/plan_steps.h). A value an earlier traversal computes and a
// later one re-reads is stored and loaded back when recomputing it costs
// more than a store and a load; otherwise it is recomputed.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

const char *kMaskedSoftmax = R"(program masked_softmax {
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
})";

TEST(MaterializeOrRecompute, SoftmaxStoresExpInTheSumTraversal) {
  test::PlanStep step = test::lowerOnePass(kMaskedSoftmax, "materialize-or-recompute");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; live columns to %3 inclusive; reduce %8
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; live columns to %3 inclusive; reduce %13
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  // exp(x - max) is stored where it is summed, stopping at the same bound
  // as the traversal that loads it back and divides.
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; live columns to %3 inclusive; reduce %8
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; live columns to %3 inclusive; materialize %10 reduce %13
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.what, "1 re-read values materialized by the traversal that first computes them, "
                       "0 recomputed (cost <= 4)");
}

TEST(MaterializeOrRecompute, UnboundedSoftmaxStoresExpToo) {
  CompileOptions options;
  options.bound_masked_columns = false;
  test::PlanStep step = test::lowerOnePass(R"(program softmax {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = reduce.max %0
  %2 = sub %0, %1
  %3 = exp %2
  %4 = reduce.sum %3
  %5 = div %3, %4
  y[0:C] = %5
})",
                                           "materialize-or-recompute", options);
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; reduce %1
;   traversal 1: len C, depth 1, masked full packets, inlined bodies; materialize %3 reduce %4
;   traversal 2: len C, depth 2, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
}

TEST(MaterializeOrRecompute, LayerNormRecomputesTheCheapDifference) {
  // x - mean costs a load and a subtract: cheaper than a store and a load.
  test::PlanStep step = test::lowerOnePass(R"(program layernorm {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = reduce.mean %0
  %2 = sub %0, %1
  %3 = const f32 1
  %4 = mul %2, %2
  %5 = reduce.mean %4
  %6 = const f32 1e-05
  %7 = add %5, %6
  %8 = sqrt %7
  %9 = div %3, %8
  %10 = mul %2, %9
  y[0:C] = %10
})",
                                           "materialize-or-recompute");
  EXPECT_EQ(step.before, step.after);
  EXPECT_EQ(step.what, "0 re-read values materialized by the traversal that first computes them, "
                       "1 recomputed (cost <= 4)");
}

} // namespace
} // namespace lanejit
