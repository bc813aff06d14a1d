// Before -> specialize-full-packets -> Expected, as plan text (tests/lower/plan_steps.h).
// specialize-full-packets: full packets run the all-on-mask body.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(SpecializeFullPackets, FullPacketsRunTheAllOnBody) {
  test::PlanStep step = test::lowerOnePass(R"(program scale {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = const f32 2
  %2 = mul %0, %1
  y[0:C] = %2
})",
                                           "specialize-full-packets");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, masked full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.what, "1 traversals run full packets with the all-on mask");
}

} // namespace
} // namespace lanejit
