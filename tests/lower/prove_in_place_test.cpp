// Before -> prove-in-place -> Expected, as plan text (tests/lower/plan_steps.h).
// prove-in-place: an exactly aliased input/output pair is proved safe when
// every element is read before it is written in the plan's order, and
// otherwise keeps its row-staging guard, with the conflicting accesses as
// the reason.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

CompileOptions noFuseOutputs() {
  CompileOptions o;
  o.fuse_outputs = false;
  return o;
}

TEST(ProveInPlace, FusedRopeIsSafeInPlace) {
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
                                           "prove-in-place");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2] write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
;   alias cos / y: guarded (row staged when in place): in-place proofs are off
;   alias sin / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2] write y[C/2 +C/2]
;   alias x / y: in place proved safe: every element is read before it is written
;   alias cos / y: in place proved safe: every element is read before it is written
;   alias sin / y: in place proved safe: every element is read before it is written
)");
  EXPECT_EQ(step.what,
            "3 input/output pairs proved safe in place, 0 inputs keep a row-staging guard");
}

TEST(ProveInPlace, UnjoinedRopeKeepsItsGuards) {
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
                                           "prove-in-place", noFuseOutputs());
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2]
;   traversal 1: len C/2, depth 0, dense full packets, inlined bodies; write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
;   alias cos / y: guarded (row staged when in place): in-place proofs are off
;   alias sin / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2]
;   traversal 1: len C/2, depth 0, dense full packets, inlined bodies; write y[C/2 +C/2]
;   alias x / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite x[0 +C/2] in traversal 1 before it is read
;   alias cos / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite cos[0 +C/2] in traversal 1 before it is read
;   alias sin / y: guarded (row staged when in place): y[0 +C/2] in traversal 0 may overwrite sin[0 +C/2] in traversal 1 before it is read
)");
  EXPECT_EQ(step.what,
            "0 input/output pairs proved safe in place, 3 inputs keep a row-staging guard");
}

TEST(ProveInPlace, WriteAheadOfItsReadIsGuarded) {
  test::PlanStep step = test::lowerOnePass(R"(program write_ahead {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[C/4:C/4+C/2]
  %1 = const f32 3
  %2 = mul %0, %1
  y[C/2:C] = %2
  %3 = load x[0:C/2]
  %4 = const f32 2
  %5 = mul %3, %4
  y[0:C/2] = %5
})",
                                           "prove-in-place");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[C/2 +C/2] write y[0 +C/2]
;   alias x / y: guarded (row staged when in place): in-place proofs are off
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[C/2 +C/2] write y[0 +C/2]
;   alias x / y: guarded (row staged when in place): y[C/2 +C/2] in traversal 0 may overwrite x[C/4 +C/2] in traversal 0 before it is read
)");
  EXPECT_EQ(step.what,
            "0 input/output pairs proved safe in place, 1 inputs keep a row-staging guard");
}

TEST(ProveInPlace, WriteBehindItsReadIsProved) {
  // y[0, C/2) = 2 * x[C/4, C/4 + C/2): packet j reads column C/4 + j*W.. and
  // writes column j*W.., which an earlier packet already read.
  test::PlanStep step = test::lowerOnePass(R"(program write_behind {
  in x: f32[R, C]
  out y: f32[R, C/2]
  %0 = load x[C/4:C/4+C/2]
  %1 = const f32 2
  %2 = mul %0, %1
  y[0:C/2] = %2
})",
                                           "prove-in-place");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C/2, depth 0, dense full packets, inlined bodies; write y[0 +C/2]
;   alias x / y: in place proved safe: every element is read before it is written
)");
}

TEST(ProveInPlace, ColumnVectorsAreLeftToTheCaller) {
  test::PlanStep step = test::lowerOnePass(R"(program scale_by_column {
  in x: f32[R, C]
  in g: f32[C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = load g[0:C]
  %2 = mul %0, %1
  y[0:C] = %2
})",
                                           "prove-in-place");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards per row
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
;   alias g / y: not a row tensor: any overlap stages the whole input before the launch
)");
}

} // namespace
} // namespace lanejit
