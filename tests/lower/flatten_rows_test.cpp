// Before -> flatten-rows -> Expected, as plan text (tests/lower/plan_steps.h).
// flatten-rows: an all-elementwise plan runs a call's dense rows as one row.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(FlattenRows, FlattensAnElementwiseProgram) {
  test::PlanStep step = test::lowerOnePass(R"(program swiglu {
  in x: f32[R, C]
  in u: f32[R, C]
  in s: f32
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = sigmoid %0
  %2 = mul %0, %1
  %3 = load u[0:C]
  %4 = mul %2, %3
  %5 = load s
  %6 = mul %4, %5
  y[0:C] = %6
})",
                                           "flatten-rows");
  EXPECT_EQ(step.before, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
;   alias u / y: in place proved safe: every element is read before it is written
;   alias s / y: not a row tensor: any overlap stages the whole input before the launch
)");
  EXPECT_EQ(step.after, R"(; plan: W=16, 4 accumulators per reduction, guards hoisted
;   rows flattened into one row of rows x C columns when every row tensor is dense
;   traversal 0: len C, depth 0, dense full packets, inlined bodies; write y[0 +C]
;   alias x / y: in place proved safe: every element is read before it is written
;   alias u / y: in place proved safe: every element is read before it is written
;   alias s / y: not a row tensor: any overlap stages the whole input before the launch
)");
  EXPECT_EQ(step.what,
            "a call's rows run as one row of rows x C columns when every row tensor is dense");
}

// Each of these reads something that depends on the row or the column.
TEST(FlattenRows, KeepsRowsForColumnWisePrograms) {
  const char *programs[] = {
      R"(program bias {
  in x: f32[R, C]
  in b: f32[C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = load b[0:C]
  %2 = add %0, %1
  y[0:C] = %2
})",
      R"(program rowscale {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = row
  %2 = tof32 %1
  %3 = mul %0, %2
  y[0:C] = %3
})",
      R"(program norm {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C]
  %1 = reduce.sum %0
  %2 = div %0, %1
  y[0:C] = %2
})",
      R"(program halves {
  in x: f32[R, C]
  out y: f32[R, C]
  %0 = load x[0:C/2]
  y[0:C/2] = %0
  %1 = load x[C/2:C]
  y[C/2:C] = %1
})",
  };
  for (const char *text : programs) {
    test::PlanStep step = test::lowerOnePass(text, "flatten-rows");
    EXPECT_EQ(step.before, step.after) << text;
    EXPECT_EQ(step.what.rfind("rows stay rows: ", 0), 0u) << step.what;
  }
}

// lanejit.torch specialises programs to the width they were traced with:
// a fixed width flattens like C does.
TEST(FlattenRows, FlattensAProgramOfFixedWidth) {
  test::PlanStep step = test::lowerOnePass(R"(program swiglu65 {
  in g: f32[R, 65]
  in u: f32[R, 65]
  out y: f32[R, 65]
  %0 = load g[0:65]
  %1 = sigmoid %0
  %2 = mul %0, %1
  %3 = load u[0:65]
  %4 = mul %2, %3
  y[0:65] = %4
})",
                                           "flatten-rows");
  EXPECT_EQ(step.what,
            "a call's rows run as one row of rows x 65 columns when every row tensor is dense");
  EXPECT_NE(step.after.find("rows flattened"), std::string::npos) << step.after;
  // A row tensor of another width keeps rows.
  step = test::lowerOnePass(R"(program mixed {
  in g: f32[R, 65]
  in u: f32[R, 66]
  out y: f32[R, 65]
  %0 = load g[0:65]
  %1 = load u[0:65]
  %2 = mul %0, %1
  y[0:65] = %2
})",
                            "flatten-rows");
  EXPECT_EQ(step.what.rfind("rows stay rows: input u", 0), 0u) << step.what;
}

} // namespace
} // namespace lanejit
