// print -> parse -> print is the identity on text, and parsing keeps the
// structural hash: for the operator library and for hand-built programs
// covering every node kind, op, dtype and awkward constant.
#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

namespace lanejit {
namespace {

const Dim C = Dim::C();

void expectRoundTrip(const Program &p) {
  std::string text = print(p);
  SCOPED_TRACE(text);
  Program q = parse(text);
  EXPECT_EQ(print(q), text);
  EXPECT_EQ(q.hash(), p.hash());
}

Expr f32(float v) {
  return ir::constant(DType::F32, v);
}

// x:[R,C] -> y:[R,C] = body(load x).
Program unaryProgram(const std::string &name, const std::function<Expr(Expr)> &body) {
  Program p;
  p.name = name;
  p.inputs = {{"x", ParamKind::RowTensor, DType::F32, C}};
  p.outputs = {{"y", DType::F32, C}};
  p.writes = {{0, 0, C, body(ir::load(0, p.inputs[0], 0, C))}};
  return p;
}

// A value of type `t` built from x (f32), the column index (i32) or a
// comparison (bool); `uniform` makes it row-uniform.
Expr operandOfType(DType t, const Expr &x, bool uniform) {
  Expr f = uniform ? ir::reduce(ReduceOp::Sum, x) : x;
  switch (t) {
  case DType::F32: return f;
  case DType::I32: return uniform ? ir::rowIndex() : ir::colIndex(0, C);
  case DType::Bool: return ir::binary(BinaryOp::Lt, f, f32(0));
  case DType::BF16:
  case DType::F16: break; // buffer types only
  }
  return f;
}

Expr toF32(const Expr &e) {
  switch (e->type) {
  case DType::F32: return e;
  case DType::I32: return ir::unary(UnaryOp::ToF32, e);
  case DType::Bool: return ir::select(e, f32(1), f32(-1));
  case DType::BF16:
  case DType::F16: break; // buffer types only
  }
  return e;
}

TEST(RoundTrip, LibraryPrograms) {
  ASSERT_FALSE(library::all().empty());
  for (const library::Entry &entry : library::all()) {
    SCOPED_TRACE(entry.name);
    expectRoundTrip(entry.make());
  }
}

// Buffers of every storage type, and a mix: bf16 in, f16 and f32 out.
TEST(RoundTrip, BufferElementTypes) {
  for (DType storage : {DType::BF16, DType::F16})
    for (const library::Entry &entry : library::all()) {
      SCOPED_TRACE(entry.name + " in " + std::string(name(storage)));
      expectRoundTrip(withStorage(entry.make(), storage));
    }
  Program mixed = parse("program mixed {\n"
                        "  in x: bf16[R, C]\n"
                        "  in g: f16[C]\n"
                        "  in eps: bf16\n"
                        "  out y: f16[R, C]\n"
                        "  out z: f32[R, C]\n"
                        "  %0 = load x[0:C]\n"
                        "  %1 = load g[0:C]\n"
                        "  %2 = load eps\n"
                        "  %3 = mul %0, %1\n"
                        "  %4 = add %3, %2\n"
                        "  y[0:C] = %4\n"
                        "  z[0:C] = %0\n"
                        "}\n");
  EXPECT_EQ(mixed.inputs[0].type, DType::BF16);
  EXPECT_EQ(mixed.inputs[1].type, DType::F16);
  EXPECT_EQ(mixed.outputs[0].type, DType::F16);
  expectRoundTrip(mixed);
}

constexpr DType kTypes[] = {DType::F32, DType::I32, DType::Bool};

TEST(RoundTrip, EveryUnaryOpOnEveryTypeItAccepts) {
#define LANEJIT_UNARY_CASE(Name, ...) UnaryOp::Name,
  for (UnaryOp op : {LANEJIT_UNARY_OPS(LANEJIT_UNARY_CASE)}) {
#undef LANEJIT_UNARY_CASE
    SCOPED_TRACE(std::string(name(op)));
    int accepted = 0;
    for (DType t : kTypes) {
      for (bool uniform : {false, true}) {
        Program p = unaryProgram("unary", [&](Expr x) {
          try {
            return toF32(ir::unary(op, operandOfType(t, x, uniform)));
          } catch (const Error &) {
            return Expr(); // this op does not take type t
          }
        });
        if (!p.writes[0].value)
          continue;
        ++accepted;
        expectRoundTrip(p);
      }
    }
    EXPECT_GT(accepted, 0);
  }
}

TEST(RoundTrip, EveryBinaryOpOnEveryTypeItAccepts) {
#define LANEJIT_BINARY_CASE(Name, ...) BinaryOp::Name,
  for (BinaryOp op : {LANEJIT_BINARY_OPS(LANEJIT_BINARY_CASE)}) {
#undef LANEJIT_BINARY_CASE
    SCOPED_TRACE(std::string(name(op)));
    int accepted = 0;
    for (DType t : kTypes) {
      // column op column, column op uniform, uniform op column
      for (int shape = 0; shape < 3; ++shape) {
        Program p = unaryProgram("binary", [&](Expr x) {
          try {
            Expr a = operandOfType(t, x, shape == 2), b = operandOfType(t, x, shape == 1);
            return toF32(ir::binary(op, a, b));
          } catch (const Error &) {
            return Expr();
          }
        });
        if (!p.writes[0].value)
          continue;
        ++accepted;
        expectRoundTrip(p);
      }
    }
    EXPECT_GT(accepted, 0);
  }
}

TEST(RoundTrip, EveryReduction) {
#define LANEJIT_REDUCE_CASE(Name, ...) ReduceOp::Name,
  for (ReduceOp op : {LANEJIT_REDUCE_OPS(LANEJIT_REDUCE_CASE)}) {
#undef LANEJIT_REDUCE_CASE
    SCOPED_TRACE(std::string(name(op)));
    expectRoundTrip(unaryProgram(
        "reduce", [&](Expr x) { return ir::binary(BinaryOp::Sub, x, ir::reduce(op, x)); }));
  }
}

TEST(RoundTrip, EveryNodeKindAndDeclarationShape) {
  Program p;
  p.name = "every kind";
  p.inputs = {{"x", ParamKind::RowTensor, DType::F32, C + 1},
              {"half", ParamKind::RowTensor, DType::F32, (C + 1) / 2},
              {"g", ParamKind::ColVector, DType::F32, C * 3 / 4 + 1},
              {"seven", ParamKind::ColVector, DType::F32, 7},
              {"s", ParamKind::Scalar, DType::F32, C}};
  p.outputs = {
      {"in", DType::F32, C}, {"out", DType::F32, (C + 1) / 2}, {"program", DType::F32, C / 2}};
  Expr x = ir::load(0, p.inputs[0], 1, C);
  Expr s = ir::loadScalar(4, p.inputs[4]);
  Expr g = ir::load(2, p.inputs[2], 0, C * 3 / 4 + 1);
  Expr seven = ir::load(3, p.inputs[3], 2, 5);
  Expr keep = ir::binary(BinaryOp::Le, ir::colIndex(0, C),
                         ir::binary(BinaryOp::Mod, ir::rowIndex(), ir::dimValue((C + 1) / 2)));
  Expr lo = ir::slice(x, 0, C / 2), hi = ir::slice(x, C / 2, C - C / 2);
  Expr mixed = ir::fma(ir::slice(g, 1, C / 2), lo, ir::reduce(ReduceOp::Max, seven));
  // A Dim that is not an integer for every C still prints and reads exactly.
  Expr odd = ir::unary(UnaryOp::ToF32, ir::dimValue(Dim::affine(-3, 7, 5)));
  Expr h = ir::load(1, p.inputs[1], 0, (C + 1) / 2);
  p.writes = {
      {0, 0, C, ir::select(keep, x, ir::unary(UnaryOp::Neg, s))},
      {1, 0, (C + 1) / 2, ir::binary(BinaryOp::Add, h, s)},
      {2, 0, C / 2, ir::binary(BinaryOp::Sub, ir::binary(BinaryOp::Mul, mixed, odd), hi)},
      {2, C / 2, 0, f32(5)}, // an empty write
  };
  expectRoundTrip(p);
}

TEST(RoundTrip, EveryDimShape) {
  // Signs, zero parts, fractions: each Dim::str() form reads back exactly.
  for (int64_t a = -3; a <= 3; ++a) {
    for (int64_t b = -4; b <= 4; ++b) {
      for (int64_t d = 1; d <= 4; ++d) {
        Dim dim = Dim::affine(a, b, d);
        SCOPED_TRACE(dim.str());
        expectRoundTrip(unaryProgram("dims", [&](Expr x) {
          return ir::binary(BinaryOp::Add, x, ir::unary(UnaryOp::ToF32, ir::dimValue(dim)));
        }));
      }
    }
  }
}

TEST(RoundTrip, WritesInAnOrderUnlikeTheirNodes) {
  Program p = unaryProgram("order", [](Expr x) { return x; });
  p.outputs.push_back({"z", DType::F32, C});
  Expr e = ir::unary(UnaryOp::Exp, p.writes[0].value);
  p.writes = {{0, 0, C, ir::binary(BinaryOp::Add, e, p.writes[0].value)}, {1, 0, C, e}};
  expectRoundTrip(p);
}

TEST(RoundTrip, SpecialConstants) {
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -0.0f,
                            0.0f,
                            FLT_TRUE_MIN,
                            -FLT_TRUE_MIN,
                            3e-40f, // a denormal with several digits
                            std::nextafter(FLT_MIN, 0.0f),
                            FLT_MIN,
                            FLT_MAX,
                            -FLT_MAX,
                            0.1f,
                            1e-5f,
                            1.0f / 3.0f,
                            std::nextafter(1.0f, 2.0f),
                            0.7978845608f,
                            16777216.0f,
                            123456792.0f,
                            -2.5e-20f};
  Program p;
  p.name = "constants";
  int n = static_cast<int>(std::size(specials)) + 4;
  p.outputs = {{"y", DType::F32, n}};
  int col = 0;
  for (float v : specials)
    p.writes.push_back({0, col++, 1, f32(v)});
  for (double v : {-2147483648.0, 2147483647.0, 0.0})
    p.writes.push_back({0, col++, 1, toF32(ir::constant(DType::I32, v))});
  Expr both = ir::binary(BinaryOp::Or, ir::constant(DType::Bool, 1), ir::constant(DType::Bool, 0));
  p.writes.push_back({0, col++, 1, toF32(both)});
  expectRoundTrip(p);

  // Every constant reads back bit for bit (NaN as the one quiet NaN).
  Program q = parse(print(p));
  for (size_t i = 0; i < std::size(specials); ++i) {
    double back = q.writes[i].value->value;
    if (std::isnan(specials[i])) {
      EXPECT_TRUE(std::isnan(back));
      continue;
    }
    EXPECT_EQ(back, static_cast<double>(specials[i]));
    EXPECT_EQ(std::signbit(back), std::signbit(specials[i])) << specials[i];
  }
}

TEST(RoundTrip, StructurallyEqualDistinctNodesStayDistinct) {
  Program p = unaryProgram("dup", [](Expr x) {
    return ir::binary(BinaryOp::Mul, ir::binary(BinaryOp::Add, x, f32(2)),
                      ir::binary(BinaryOp::Add, x, f32(2)));
  });
  expectRoundTrip(p);
  Program q = parse(print(p));
  const Node &mul = *q.writes[0].value;
  EXPECT_NE(mul.args[0].get(), mul.args[1].get());
}

} // namespace
} // namespace lanejit
