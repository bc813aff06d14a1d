// flatten-rows: an all-elementwise plan runs a call's dense rows as one row.
// Its Before -> Expected cases are tests/lower/cases/flatten-rows/; these
// check the account of programs that keep their rows, by its start.
#include "lower/plan_steps.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

// Each of these reads something that depends on the row or the column.
TEST(FlattenRows, KeepsRowsForColumnWisePrograms) {
  for (const char *name : {"bias", "rowscale", "norm", "halves"}) {
    test::PlanStep step = test::lowerOnePass(test::planProgram(name), "flatten-rows");
    EXPECT_EQ(step.before, step.after) << name;
    EXPECT_EQ(step.what.rfind("rows stay rows: ", 0), 0u) << step.what;
  }
}

// lanejit.torch specialises programs to the width they were traced with:
// a fixed width flattens like C does.
TEST(FlattenRows, FlattensAProgramOfFixedWidth) {
  test::PlanStep step = test::lowerOnePass(test::planProgram("swiglu65"), "flatten-rows");
  EXPECT_EQ(step.what,
            "a call's rows run as one row of rows x 65 columns when every row tensor is dense");
  EXPECT_NE(step.after.find("rows flattened"), std::string::npos) << step.after;
  // A row tensor of another width keeps rows.
  step = test::lowerOnePass(test::planProgram("mixed"), "flatten-rows");
  EXPECT_EQ(step.what.rfind("rows stay rows: input u", 0), 0u) << step.what;
}

} // namespace
} // namespace lanejit
