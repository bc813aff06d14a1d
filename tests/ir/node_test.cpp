// ir:: make functions: result types and lengths, and the errors they throw
// for ill-typed operands.
#include <lanejit/error.h>
#include <lanejit/ir.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <functional>

namespace lanejit {
namespace {

const Dim C = Dim::C();
const Param kX{"x", ParamKind::RowTensor, DType::F32, C};
const Param kS{"s", ParamKind::Scalar, DType::F32, 0};

Expr x() {
  return ir::load(0, kX, 0, C);
}
Expr f32(double v) {
  return ir::constant(DType::F32, v);
}
Expr i32(double v) {
  return ir::constant(DType::I32, v);
}

TEST(Node, ElementwiseBroadcastsRowUniformOperands) {
  Expr sum = ir::binary(BinaryOp::Add, x(), f32(1));
  EXPECT_EQ(sum->kind, NodeKind::Binary);
  EXPECT_EQ(sum->binaryOp(), BinaryOp::Add);
  EXPECT_EQ(sum->type, DType::F32);
  EXPECT_EQ(sum->len, C);
  Expr uniform = ir::binary(BinaryOp::Mul, f32(2), f32(3));
  EXPECT_TRUE(uniform->rowUniform());
}

TEST(Node, ComparisonsGiveBoolAndConversionsChangeType) {
  EXPECT_EQ(ir::binary(BinaryOp::Lt, x(), f32(0))->type, DType::Bool);
  EXPECT_EQ(ir::binary(BinaryOp::Eq, ir::colIndex(0, C), i32(2))->type, DType::Bool);
  EXPECT_EQ(ir::unary(UnaryOp::ToI32, x())->type, DType::I32);
  EXPECT_EQ(ir::unary(UnaryOp::ToF32, ir::rowIndex())->type, DType::F32);
}

TEST(Node, ReduceAndSliceShapes) {
  Expr m = ir::reduce(ReduceOp::Mean, x());
  EXPECT_TRUE(m->rowUniform());
  EXPECT_EQ(m->reduceOp(), ReduceOp::Mean);
  Expr hi = x().cols(C / 2, C);
  EXPECT_EQ(hi->kind, NodeKind::Slice);
  EXPECT_EQ(hi->begin, C / 2);
  EXPECT_EQ(hi->len, C / 2);
}

TEST(Node, StructurallyEqualNodesHashEqual) {
  Expr a = ir::binary(BinaryOp::Mul, x(), f32(0.5));
  Expr b = ir::binary(BinaryOp::Mul, x(), f32(0.5));
  Expr c = ir::binary(BinaryOp::Mul, x(), f32(0.25));
  EXPECT_EQ(a->hash, b->hash);
  EXPECT_TRUE(ir::structurallyEqual(a, b));
  EXPECT_FALSE(ir::structurallyEqual(a, c));
}

TEST(Node, TypeMismatchIsRejected) {
  EXPECT_EQ(test::verifyErrorOf([] { ir::binary(BinaryOp::Add, x(), i32(1)); }),
            "add: operand types f32 and i32 differ");
  EXPECT_EQ(test::verifyErrorOf([] { ir::binary(BinaryOp::Mod, x(), f32(2)); }),
            "mod: operands must be i32, not f32");
  EXPECT_EQ(test::verifyErrorOf([] { ir::unary(UnaryOp::Exp, ir::rowIndex()); }),
            "exp: operand must be f32, not i32");
  EXPECT_EQ(test::verifyErrorOf([] { ir::unary(UnaryOp::Not, x()); }), "not: operand must be bool, not f32");
  EXPECT_EQ(test::verifyErrorOf([] { ir::select(x(), x(), x()); }), "select: condition must be bool, not f32");
  EXPECT_EQ(test::verifyErrorOf([] { ir::fma(i32(1), i32(2), i32(3)); }), "fma: operands must be f32, not i32");
}

TEST(Node, LengthMismatchIsRejected) {
  EXPECT_EQ(test::verifyErrorOf([] { ir::binary(BinaryOp::Add, x(), x().cols(0, C / 2)); }),
            "add: operand lengths [C] and [C/2] differ (elementwise operands must have equal "
            "column counts)");
}

TEST(Node, ReduceNeedsAColumnVector) {
  EXPECT_EQ(test::verifyErrorOf([] { ir::reduce(ReduceOp::Sum, f32(1)); }),
            "reduce.sum: operand is row-uniform; reductions take a column vector");
  EXPECT_EQ(test::verifyErrorOf([] { ir::reduce(ReduceOp::Max, ir::colIndex(0, C)); }),
            "reduce.max: operand must be f32, not i32");
}

TEST(Node, ConstantsMustBeExact) {
  EXPECT_EQ(test::verifyErrorOf([] { f32(0.1); }), "const: value 0.100000 is not exactly an f32");
  EXPECT_EQ(test::verifyErrorOf([] { i32(1.5); }), "const: value 1.500000 is not an i32");
  EXPECT_EQ(test::verifyErrorOf([] { ir::constant(DType::Bool, 2); }), "const: bool value must be 0 or 1");
  EXPECT_EQ(test::verifyErrorOf([] { f32(0.1f); }), "no error");
}

TEST(Node, SlicesAndLoadsCheckTheirOperands) {
  EXPECT_EQ(test::verifyErrorOf([] { ir::slice(x(), 0, C + 1); }),
            "slice: end C+1 may exceed the operand's length C");
  EXPECT_EQ(test::verifyErrorOf([] { ir::slice(f32(1), 0, 1); }),
            "slice: operand is row-uniform and has no columns to slice");
  EXPECT_EQ(test::verifyErrorOf([] { ir::load(0, kS, 0, C); }),
            "load: input 's' is a scalar and has no columns");
  EXPECT_EQ(test::verifyErrorOf([] { ir::loadScalar(0, kX); }),
            "load: input 'x' is a row tensor; give a column range");
}

} // namespace
} // namespace lanejit
