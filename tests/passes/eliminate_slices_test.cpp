// Before -> eliminateSlices -> Expected, compared as printed text.
#include <lanejit/dsl.h>
#include <lanejit/text.h>

#include "passes/eliminate_slices.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

const Dim C = Dim::C();

TEST(EliminateSlices, PushesSliceThroughElementwiseOpsIntoLoads) {
  ProgramBuilder before("p");
  Expr x = before.rows("x"), g = before.columns("g");
  before.output("y", (x * g + 1.0f).cols(C / 2, C));

  Program want;
  want.name = "p";
  Param xd{"x", ParamKind::RowTensor}, gd{"g", ParamKind::ColVector};
  want.inputs = {xd, gd};
  Expr body = ir::binary(
      BinaryOp::Add,
      ir::binary(BinaryOp::Mul, ir::load(0, xd, C / 2, C / 2), ir::load(1, gd, C / 2, C / 2)),
      ir::constant(DType::F32, 1.0));
  want.outputs = {Output{"y", DType::F32, C / 2}};
  want.writes = {Write{0, 0, C / 2, body}};

  EXPECT_EQ(print(passes::eliminateSlices(before.build())), print(want));
}

TEST(EliminateSlices, NestedSlicesComposeAndColumnIndicesShift) {
  ProgramBuilder before("p");
  Expr x = before.rows("x");
  Expr shifted = (x + toF32(col())).cols(2, C).cols(1, C - 2);
  before.output("y", shifted);
  Program after = passes::eliminateSlices(before.build());
  std::string text = print(after);
  EXPECT_NE(text.find("load x[3:C]"), std::string::npos) << text;
  EXPECT_NE(text.find("col[3:C]"), std::string::npos) << text;
  EXPECT_EQ(text.find("slice"), std::string::npos) << text;
}

TEST(EliminateSlices, LeavesRowUniformOperandsAlone) {
  ProgramBuilder before("p");
  Expr x = before.rows("x");
  before.output("y", (x - mean(x)).cols(0, C / 2));
  std::string text = print(passes::eliminateSlices(before.build()));
  // The mean still reads the whole row; only the elementwise part is sliced.
  EXPECT_NE(text.find("load x[0:C]"), std::string::npos) << text;
  EXPECT_NE(text.find("load x[0:C/2]"), std::string::npos) << text;
}

TEST(EliminateSlices, ProgramWithoutSlicesIsUnchanged) {
  ProgramBuilder b("p");
  Expr x = b.rows("x");
  b.output("y", exp(x) * 2.0f);
  Program p = b.build();
  EXPECT_EQ(print(passes::eliminateSlices(p)), print(p));
}

} // namespace
} // namespace lanejit
