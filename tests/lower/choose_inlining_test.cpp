// Before -> choose-inlining -> Expected, as plan text (tests/lower/plan_steps.h).
// choose-inlining: packet bodies inlined or emitted as helpers, by the cost
// rule or forced.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

CompileOptions neverInline() {
  CompileOptions o;
  o.inline_packet_bodies = CompileOptions::Inline::Never;
  o.materialize_or_recompute = true; // softmax's exp stored, as the plans below say
  return o;
}

// The rule: inline when (body cost) x (copies) <= 2048. The reduction's
// body costs 1 (load) + 41 (tanh) + 31 (exp) + 1 (add) = 74; a reduction
// traversal emits 2K - 1 copies of it, K = 64 / W accumulators: 7 copies at
// W = 16 (518, inlined), 31 at W = 4 (2294, a helper). The write's body
// stays inline at any W.
constexpr const char *kTanhExpSum = R"(program tanh_exp_sum {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = tanh %0
  %2 = exp %0
  %3 = add %1, %2
  %4 = reduce.sum %3
  %5 = add %0, %4
  y[0:C] = %5
})";

TEST(ChooseInlining, TheCostRuleInlinesAtW16) {
  test::PlanStep step = test::lowerOnePass(kTanhExpSum, "choose-inlining", {}, 16);
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; reduce %4
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "2 of 2 traversals inline their packet bodies (cost rule: inline when body "
                       "cost x copies <= 2048)");
}

TEST(ChooseInlining, TheCostRuleCallsAHelperAtW4) {
  test::PlanStep step = test::lowerOnePass(kTanhExpSum, "choose-inlining", {}, 4);
  EXPECT_EQ(step.after, R"(; plan: W=4, 16 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, helper bodies; reduce %4
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "1 of 2 traversals inline their packet bodies (cost rule: inline when body "
                       "cost x copies <= 2048)");
}

TEST(ChooseInlining, ForcedHelpers) {
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
                                           "choose-inlining", neverInline());
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; live columns to %3 inclusive; reduce %8
;   traversal 1: len C, depth 1, dense full packets, inlined bodies; live columns to %3 inclusive; materialize %10 reduce %13
;   traversal 2: len C, depth 2, dense full packets, inlined bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, helper bodies; live columns to %3 inclusive; reduce %8
;   traversal 1: len C, depth 1, dense full packets, helper bodies; live columns to %3 inclusive; materialize %10 reduce %13
;   traversal 2: len C, depth 2, dense full packets, helper bodies; live columns to %3 inclusive; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what, "0 of 3 traversals inline their packet bodies (forced helpers)");
}

} // namespace
} // namespace lanejit
