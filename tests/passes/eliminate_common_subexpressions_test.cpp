// Before -> eliminateCommonSubexpressions -> Expected.
#include <lanejit/dsl.h>
#include <lanejit/text.h>

#include "passes/eliminate_common_subexpressions.h"

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(Cse, MergesStructurallyEqualSubtrees) {
  // x*x built twice, as two distinct node objects.
  Program decl;
  decl.name = "p";
  decl.inputs = {Param{"x"}};
  Expr a = ir::load(0, decl.inputs[0], 0, Dim::C());
  Expr b = ir::load(0, decl.inputs[0], 0, Dim::C());
  Expr sq1 = ir::binary(BinaryOp::Mul, a, a), sq2 = ir::binary(BinaryOp::Mul, b, b);
  Program p = decl;
  p.outputs = {Output{"y"}};
  p.writes = {Write{0, 0, Dim::C(), ir::binary(BinaryOp::Add, sq1, sq2)}};
  std::string beforeText = print(p);
  ASSERT_EQ(test::countOccurrences(beforeText, "= load x"), 2u) << beforeText;
  ASSERT_EQ(test::countOccurrences(beforeText, "= mul"), 2u) << beforeText;

  std::string after = print(passes::eliminateCommonSubexpressions(p));
  EXPECT_EQ(test::countOccurrences(after, "= load x"), 1u) << after;
  EXPECT_EQ(test::countOccurrences(after, "= mul"), 1u) << after;
  EXPECT_EQ(test::countOccurrences(after, "= add"), 1u) << after;
}

TEST(Cse, KeepsDifferentLoadsApart) {
  ProgramBuilder b("p");
  Expr x = b.rows("x");
  b.output("y", x.cols(0, Dim::C() / 2) + x.cols(Dim::C() / 2, Dim::C()));
  Program p = b.build();
  EXPECT_EQ(print(passes::eliminateCommonSubexpressions(p)), print(p));
}

} // namespace
} // namespace lanejit
