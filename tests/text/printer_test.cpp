// The printer: hand-built programs -> their exact canonical text.
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

namespace lanejit {
namespace {

const Dim C = Dim::C();

Param rows(const std::string &name, Dim cols = Dim::C()) {
  return {name, ParamKind::RowTensor, DType::F32, cols};
}
Param columns(const std::string &name, Dim cols = Dim::C()) {
  return {name, ParamKind::ColVector, DType::F32, cols};
}
Param scalar(const std::string &name) {
  return {name, ParamKind::Scalar, DType::F32, C};
}

Expr f32(float v) {
  return ir::constant(DType::F32, v);
}

// A program with one output y:[R, C] written by `value` over all columns.
Program single(const std::string &name, std::vector<Param> inputs, const Expr &value) {
  Program p;
  p.name = name;
  p.inputs = std::move(inputs);
  p.outputs = {{"y", DType::F32, C}};
  p.writes = {{0, 0, C, value}};
  return p;
}

TEST(Printer, LayerNormWithScalarEpsilon) {
  Program p;
  p.name = "layernorm";
  p.inputs = {rows("x"), columns("gamma"), scalar("eps")};
  p.outputs = {{"y", DType::F32, C}};
  Expr x = ir::load(0, p.inputs[0], 0, C);
  Expr d = ir::binary(BinaryOp::Sub, x, ir::reduce(ReduceOp::Mean, x));
  Expr var = ir::reduce(ReduceOp::Mean, ir::binary(BinaryOp::Mul, d, d));
  Expr eps = ir::loadScalar(2, p.inputs[2]);
  Expr inv = ir::unary(UnaryOp::Rsqrt, ir::binary(BinaryOp::Add, var, eps));
  Expr g = ir::load(1, p.inputs[1], 0, C);
  p.writes = {{0, 0, C, ir::binary(BinaryOp::Mul, ir::binary(BinaryOp::Mul, d, inv), g)}};

  EXPECT_EQ(print(p), "program layernorm {\n"
                      "  in x: f32[R, C]\n"
                      "  in gamma: f32[C]\n"
                      "  in eps: f32\n"
                      "  out y: f32[R, C]\n"
                      "  %0 = load x[0:C]\n"
                      "  %1 = reduce.mean %0\n"
                      "  %2 = sub %0, %1\n"
                      "  %3 = mul %2, %2\n"
                      "  %4 = reduce.mean %3\n"
                      "  %5 = load eps\n"
                      "  %6 = add %4, %5\n"
                      "  %7 = rsqrt %6\n"
                      "  %8 = mul %2, %7\n"
                      "  %9 = load gamma[0:C]\n"
                      "  %10 = mul %8, %9\n"
                      "  y[0:C] = %10\n"
                      "}\n");
}

TEST(Printer, EachWriteFollowsTheNodeItStores) {
  // RoPE's shape: two writes into halves of y, the second needing new nodes.
  Program p;
  p.name = "halves";
  p.inputs = {rows("x")};
  p.outputs = {{"y", DType::F32, C}};
  Expr x = ir::load(0, p.inputs[0], 0, C);
  Expr lo = x.cols(0, C / 2), hi = x.cols(C / 2, C);
  p.writes = {{0, 0, C / 2, ir::unary(UnaryOp::Neg, hi)}, {0, C / 2, C / 2, lo}};

  EXPECT_EQ(print(p), "program halves {\n"
                      "  in x: f32[R, C]\n"
                      "  out y: f32[R, C]\n"
                      "  %0 = load x[0:C]\n"
                      "  %1 = slice %0[C/2:C]\n"
                      "  %2 = neg %1\n"
                      "  y[0:C/2] = %2\n"
                      "  %3 = slice %0[0:C/2]\n"
                      "  y[C/2:C] = %3\n"
                      "}\n");
}

TEST(Printer, WriteOfAnAlreadyPrintedNodeComesRightAfterThePreviousWrite) {
  Program p;
  p.name = "twice";
  p.inputs = {rows("x")};
  p.outputs = {{"a", DType::F32, C}, {"b", DType::F32, C}};
  Expr e = ir::unary(UnaryOp::Exp, ir::load(0, p.inputs[0], 0, C));
  p.writes = {{0, 0, C, e}, {1, 0, C, e}};

  EXPECT_EQ(print(p), "program twice {\n"
                      "  in x: f32[R, C]\n"
                      "  out a: f32[R, C]\n"
                      "  out b: f32[R, C]\n"
                      "  %0 = load x[0:C]\n"
                      "  %1 = exp %0\n"
                      "  a[0:C] = %1\n"
                      "  b[0:C] = %1\n"
                      "}\n");
}

TEST(Printer, IndexNodesAndDims) {
  Program p;
  p.name = "dims";
  p.inputs = {rows("x", C + 1)};
  p.outputs = {{"y", DType::F32, (C + 1) / 2}};
  Expr col = ir::colIndex(C / 2, (C + 1) / 2);
  Expr sum = ir::binary(BinaryOp::Add, col, ir::rowIndex());
  Expr dim = ir::dimValue(Dim::C() * 3 / 4 + 1);
  Expr keep = ir::binary(BinaryOp::Lt, sum, dim);
  Expr x = ir::load(0, p.inputs[0], 1, (C + 1) / 2);
  Expr v = ir::select(keep, x, ir::unary(UnaryOp::ToF32, sum));
  p.writes = {{0, 0, (C + 1) / 2, v}};

  EXPECT_EQ(print(p), "program dims {\n"
                      "  in x: f32[R, C+1]\n"
                      "  out y: f32[R, (C+1)/2]\n"
                      "  %0 = col[C/2:(2*C+1)/2]\n"
                      "  %1 = row\n"
                      "  %2 = add %0, %1\n"
                      "  %3 = dim (3*C+4)/4\n"
                      "  %4 = lt %2, %3\n"
                      "  %5 = load x[1:(C+3)/2]\n"
                      "  %6 = tof32 %2\n"
                      "  %7 = select %4, %5, %6\n"
                      "  y[0:(C+1)/2] = %7\n"
                      "}\n");
}

TEST(Printer, ConstantsUseShortestRoundTripText) {
  struct Case {
    Expr value;
    const char *text;
  };
  std::vector<Case> cases = {
      {f32(1e-5f), "const f32 1e-05"},
      {f32(0.1f), "const f32 0.1"},
      {f32(-0.0f), "const f32 -0"},
      {f32(0.0f), "const f32 0"},
      {f32(std::numeric_limits<float>::infinity()), "const f32 inf"},
      {f32(-std::numeric_limits<float>::infinity()), "const f32 -inf"},
      {f32(std::numeric_limits<float>::quiet_NaN()), "const f32 nan"},
      {f32(-std::numeric_limits<float>::quiet_NaN()), "const f32 nan"},
      {f32(FLT_TRUE_MIN), "const f32 1e-45"},
      {f32(FLT_MIN), "const f32 1.1754944e-38"},
      {f32(FLT_MAX), "const f32 3.4028235e+38"},
      {f32(-FLT_MAX), "const f32 -3.4028235e+38"},
      {f32(16777216.0f), "const f32 16777216"},
      {f32(0.7978845608f), "const f32 0.7978846"},
      {ir::constant(DType::I32, -2147483648.0), "const i32 -2147483648"},
      {ir::constant(DType::I32, 7), "const i32 7"},
      {ir::constant(DType::Bool, 1), "const bool true"},
      {ir::constant(DType::Bool, 0), "const bool false"},
  };
  Program empty;
  for (const Case &c : cases)
    EXPECT_EQ(printNode(*c.value, empty, [](const Expr &) { return "?"; }), c.text);
}

TEST(Printer, PrintNodeUsesTheGivenOperandNames) {
  Program p;
  p.inputs = {rows("x"), scalar("s")};
  Expr x = ir::load(0, p.inputs[0], C / 4, C / 2);
  Expr s = ir::loadScalar(1, p.inputs[1]);
  auto names = [&](const Expr &e) { return e.get() == x.get() ? "%x" : "%s"; };

  EXPECT_EQ(printNode(*x, p, names), "load x[C/4:3*C/4]");
  EXPECT_EQ(printNode(*s, p, names), "load s");
  EXPECT_EQ(printNode(*ir::fma(x, s, x), p, names), "fma %x, %s, %x");
  EXPECT_EQ(printNode(*ir::binary(BinaryOp::Max, x, s), p, names), "max %x, %s");
  EXPECT_EQ(printNode(*ir::reduce(ReduceOp::Max, x), p, names), "reduce.max %x");
  EXPECT_EQ(printNode(*ir::slice(x, 1, C / 2 - 2), p, names), "slice %x[1:(C-2)/2]");
}

TEST(Printer, NamesThatAreNotIdentifiersAreQuoted) {
  Program p = single("my \"prog\"\n", {rows("in")}, f32(1));
  p.outputs[0].name = "out";
  p.writes[0].value = ir::load(0, p.inputs[0], 0, C);

  EXPECT_EQ(print(p), "program \"my \\\"prog\\\"\\x0a\" {\n"
                      "  in \"in\": f32[R, C]\n"
                      "  out \"out\": f32[R, C]\n"
                      "  %0 = load \"in\"[0:C]\n"
                      "  \"out\"[0:C] = %0\n"
                      "}\n");
}

TEST(Printer, RowUniformWriteIsABroadcast) {
  Program p = single("fill", {scalar("s")}, Expr());
  p.writes[0].value = ir::unary(UnaryOp::Abs, ir::loadScalar(0, p.inputs[0]));

  EXPECT_EQ(print(p), "program fill {\n"
                      "  in s: f32\n"
                      "  out y: f32[R, C]\n"
                      "  %0 = load s\n"
                      "  %1 = abs %0\n"
                      "  y[0:C] = %1\n"
                      "}\n");
}

TEST(Printer, StructurallyEqualButDistinctNodesAreBothPrinted) {
  Expr a = f32(2), b = f32(2);
  Program p = single("dup", {}, ir::binary(BinaryOp::Add, a, b));

  EXPECT_EQ(print(p), "program dup {\n"
                      "  out y: f32[R, C]\n"
                      "  %0 = const f32 2\n"
                      "  %1 = const f32 2\n"
                      "  %2 = add %0, %1\n"
                      "  y[0:C] = %2\n"
                      "}\n");
}

} // namespace
} // namespace lanejit
