// Before -> hoist-guards -> Expected, as plan text (tests/lower/plan_steps.h).
// hoist-guards: the alias guards (launch-uniform) run once per entry call.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

CompileOptions noFuseOutputs() {
  CompileOptions o;
  o.fuse_outputs = false;
  return o;
}

TEST(HoistGuards, EvaluatesGuardsOncePerCall) {
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
                                           "hoist-guards", noFuseOutputs());
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2]
;   traversal 1: len C/2, depth 0, dense full packets, inlined bodies; write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite x[0 +C/2] in traversal 1 before it is read
;   alias cos / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite cos[0 +C/2] in traversal 1 before it is read
;   alias sin / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite sin[0 +C/2] in traversal 1 before it is read
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2]
;   traversal 1: len C/2, depth 0, dense full packets, inlined bodies; write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite x[0 +C/2] in traversal 1 before it is read
;   alias cos / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite cos[0 +C/2] in traversal 1 before it is read
;   alias sin / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite sin[0 +C/2] in traversal 1 before it is read
)");
  EXPECT_EQ(step.what, "3 alias guards evaluated once per entry call");
}

} // namespace
} // namespace lanejit
