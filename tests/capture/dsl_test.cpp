// The capture DSL: declarations, operators and literals build the expected
// IR nodes; misuse is reported as Error(Kind::Verify).
#include <lanejit/dsl.h>
#include <lanejit/error.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <functional>

namespace lanejit {
namespace {

const Dim C = Dim::C();

TEST(Dsl, DeclarationsLoadWholeInputs) {
  ProgramBuilder b("decl");
  Expr x = b.rows("x"), g = b.columns("g", C / 2), s = b.scalar("s");
  b.output("y", x);
  Program p = b.build();
  ASSERT_EQ(p.inputs.size(), 3u);
  EXPECT_EQ(p.inputs[0].kind, ParamKind::RowTensor);
  EXPECT_EQ(p.inputs[1].kind, ParamKind::ColVector);
  EXPECT_EQ(p.inputs[1].cols, C / 2);
  EXPECT_EQ(p.inputs[2].kind, ParamKind::Scalar);
  EXPECT_EQ(x->kind, NodeKind::Load);
  EXPECT_EQ(x->param, 0);
  EXPECT_EQ(x->begin, Dim(0));
  EXPECT_EQ(x->len, C);
  EXPECT_EQ(g->param, 1);
  EXPECT_EQ(g->len, C / 2);
  EXPECT_EQ(s->param, 2);
  EXPECT_TRUE(s->rowUniform());
}

TEST(Dsl, DuplicateInputNameIsRejected) {
  ProgramBuilder b("dup");
  b.rows("x");
  EXPECT_EQ(test::verifyErrorOf([&] { b.columns("x"); }), "program 'dup': input 'x' is declared twice");
}

TEST(Dsl, OperatorsBuildBinaryNodesInOrder) {
  ProgramBuilder b("ops");
  Expr x = b.rows("x"), u = b.rows("u");
  Expr e = (x - u) / x;
  EXPECT_EQ(e->binaryOp(), BinaryOp::Div);
  EXPECT_EQ(e->args[0]->binaryOp(), BinaryOp::Sub);
  EXPECT_EQ(e->args[0]->args[0].get(), x.get());
  EXPECT_EQ(e->args[0]->args[1].get(), u.get());
  EXPECT_EQ(e->args[1].get(), x.get());
  EXPECT_EQ((-x)->unaryOp(), UnaryOp::Neg);
  EXPECT_EQ((x < u)->binaryOp(), BinaryOp::Lt);
  EXPECT_EQ(eq(x, u)->binaryOp(), BinaryOp::Eq);
  EXPECT_EQ(ne(x, u)->binaryOp(), BinaryOp::Ne);
  Expr both = (x < u) && logicalNot(x >= u);
  EXPECT_EQ(both->binaryOp(), BinaryOp::And);
  EXPECT_EQ(both->args[1]->unaryOp(), UnaryOp::Not);
  EXPECT_EQ(((x > u) || (x <= u))->binaryOp(), BinaryOp::Or);
  // `!` is not overloaded: it still tests whether a handle is null.
  EXPECT_FALSE(!x);
  EXPECT_TRUE(!Expr());
}

TEST(Dsl, LiteralsTakeTheOtherOperandsType) {
  ProgramBuilder b("lit");
  Expr x = b.rows("x");
  Expr scaled = 2.0 * x;
  EXPECT_EQ(scaled->binaryOp(), BinaryOp::Mul);
  EXPECT_EQ(scaled->args[0]->kind, NodeKind::Const);
  EXPECT_EQ(scaled->args[0]->type, DType::F32);
  EXPECT_EQ(scaled->args[0]->value, 2.0);
  EXPECT_EQ(scaled->args[1].get(), x.get());

  Expr m = col() % 3;
  EXPECT_EQ(m->binaryOp(), BinaryOp::Mod);
  EXPECT_EQ(m->type, DType::I32);
  EXPECT_EQ(m->args[1]->type, DType::I32);
  EXPECT_EQ(m->args[1]->value, 3.0);

  Expr eps = x + 1e-5f;
  EXPECT_EQ(eps->args[1]->value, static_cast<double>(1e-5f));
}

TEST(Dsl, InexactLiteralsAreRejected) {
  ProgramBuilder b("lit");
  Expr x = b.rows("x");
  EXPECT_EQ(test::verifyErrorOf([&] { x * 0.1; }),
            "literal 0.10000000000000001 is not exactly an f32; write it as a float literal "
            "(with an f suffix)");
  EXPECT_EQ(test::verifyErrorOf([&] { x * 0.1f; }), "no error");
  EXPECT_EQ(test::verifyErrorOf([] { col() + 1.5; }), "literal 1.5 next to an i32 operand is not an i32");
  EXPECT_EQ(test::verifyErrorOf([&] { (x < 0.0) + 1.0; }),
            "literal 1: the other operand is bool, not a number");
}

TEST(Dsl, IndicesAndReductions) {
  Expr r = row(), d = dim(C / 2), c = col(C / 2, 1);
  EXPECT_EQ(r->kind, NodeKind::RowIndex);
  EXPECT_EQ(d->kind, NodeKind::DimValue);
  EXPECT_EQ(d->begin, C / 2);
  EXPECT_EQ(c->kind, NodeKind::ColIndex);
  EXPECT_EQ(c->begin, Dim(1));
  EXPECT_EQ(c->len, C / 2);
  ProgramBuilder b("red");
  Expr x = b.rows("x");
  EXPECT_EQ(sum(x)->reduceOp(), ReduceOp::Sum);
  EXPECT_EQ(mean(x)->reduceOp(), ReduceOp::Mean);
  EXPECT_EQ(rowmax(x)->reduceOp(), ReduceOp::Max);
  EXPECT_EQ(rowmin(x)->reduceOp(), ReduceOp::Min);
  EXPECT_TRUE(mean(x)->rowUniform());
  EXPECT_EQ(exp(x)->unaryOp(), UnaryOp::Exp);
  EXPECT_EQ(rsqrt(x)->unaryOp(), UnaryOp::Rsqrt);
  EXPECT_EQ(sigmoid(x)->unaryOp(), UnaryOp::Sigmoid);
  EXPECT_EQ(max(x, x)->binaryOp(), BinaryOp::Max);
  EXPECT_EQ(toI32(x)->type, DType::I32);
  EXPECT_EQ(toF32(toI32(x))->type, DType::F32);
  EXPECT_EQ(fma(x, x, x)->kind, NodeKind::Fma);
  EXPECT_EQ(select(x < 0.0, x, constant(0.0f))->kind, NodeKind::Select);
}

TEST(Dsl, WritesDeclareOutputs) {
  ProgramBuilder b("halves");
  Expr x = b.rows("x");
  b.write("y", C / 2, x.cols(0, C / 2));
  b.write("y", 0, x.cols(C / 2, C));
  Program p = b.build();
  ASSERT_EQ(p.outputs.size(), 1u);
  EXPECT_EQ(p.outputs[0].name, "y");
  EXPECT_EQ(p.outputs[0].cols, C);
  ASSERT_EQ(p.writes.size(), 2u);
  EXPECT_EQ(p.writes[0].begin, C / 2);
  EXPECT_EQ(p.writes[0].len, C / 2);
  EXPECT_EQ(p.writes[1].begin, Dim(0));
}

TEST(Dsl, OutputOfARowUniformValueCoversC) {
  ProgramBuilder b("mean");
  b.output("m", mean(b.rows("x")));
  Program p = b.build();
  EXPECT_EQ(p.outputs[0].cols, C);
  EXPECT_EQ(p.writes[0].len, C);
  EXPECT_TRUE(p.writes[0].value->rowUniform());
}

TEST(Dsl, OutputTakesTheValuesLength) {
  ProgramBuilder b("half");
  b.output("y", b.rows("x").cols(0, C / 2));
  Program p = b.build();
  EXPECT_EQ(p.outputs[0].cols, C / 2);
}

TEST(Dsl, BuildVerifies) {
  ProgramBuilder b("gap");
  Expr x = b.rows("x");
  b.write("y", 0, x.cols(0, C / 2));
  EXPECT_EQ(test::verifyErrorOf([&] { b.build(); }), "output 'y': columns [C/2, C) are never written");
  ProgramBuilder i("int");
  i.output("y", col());
  EXPECT_EQ(test::verifyErrorOf([&] { i.build(); }),
            "write #0 to output 'y': value type i32 does not match the output's f32");
}

} // namespace
} // namespace lanejit
