// The FP64 oracle: values computed by hand for each library operator on
// tiny shapes, the integer and min/max semantics of ir.h, and input checks.
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/reference.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace lanejit {
namespace {

const Dim C = Dim::C();
const double kEps = static_cast<double>(1e-5f); // the programs' f32 epsilon

using Row = std::vector<float>;

std::vector<double> rowOf(const ReferenceOutput &out, int64_t r) {
  return {out.values.begin() + r * out.cols, out.values.begin() + (r + 1) * out.cols};
}

// Evaluates a program whose every input is a dense [rows, n] matrix (n from
// the data) or a [n] vector, given in declaration order.
std::vector<ReferenceOutput> run(const Program &p, const std::vector<std::vector<Row>> &inputs,
                                 Shape shape) {
  std::vector<BufferRef> refs;
  std::vector<std::vector<float>> storage;
  storage.reserve(inputs.size()); // refs point into it
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<Row> &rows = inputs[i];
    if (p.inputs[i].kind == ParamKind::RowTensor) {
      // Rows stored with one padding float so the stride is exercised.
      int64_t cols = rows.empty() ? 0 : static_cast<int64_t>(rows[0].size());
      storage.emplace_back();
      for (const Row &r : rows) {
        storage.back().insert(storage.back().end(), r.begin(), r.end());
        storage.back().push_back(-999.0f);
      }
      refs.push_back(BufferRef::matrix(storage.back().data(), static_cast<int64_t>(rows.size()),
                                       cols, cols + 1));
    } else if (p.inputs[i].kind == ParamKind::ColVector) {
      refs.push_back(BufferRef::vector(rows[0].data(), static_cast<int64_t>(rows[0].size())));
    } else {
      refs.push_back(BufferRef::scalar(rows[0].data()));
    }
  }
  return evaluateReference(p, refs, shape);
}

TEST(Reference, RopeByHand) {
  // x = [1 2 | 3 4], cos = [0.5 0.25], sin = [0.75 -1].
  auto out = run(library::rope(), {{{1, 2, 3, 4}}, {{0.5f, 0.25f}}, {{0.75f, -1}}}, {1, 4});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(rowOf(out[0], 0), (std::vector<double>{1 * 0.5 - 3 * 0.75, 2 * 0.25 - 4 * -1.0,
                                                   1 * 0.75 + 3 * 0.5, 2 * -1.0 + 4 * 0.25}));
}

TEST(Reference, LayerNormByHand) {
  // mean 2.5, centered [-1.5 -0.5 0.5 1.5], biased variance 1.25.
  auto out =
      run(library::layerNorm(), {{{1, 2, 3, 4}}, {{1, 2, 1, 2}}, {{0.5f, 0, 0, -1}}}, {1, 4});
  double inv = 1 / std::sqrt(1.25 + kEps);
  std::vector<double> want = {-1.5 * inv * 1 + 0.5, -0.5 * inv * 2, 0.5 * inv * 1,
                              1.5 * inv * 2 - 1};
  std::vector<double> got = rowOf(out[0], 0);
  for (int j = 0; j < 4; ++j)
    EXPECT_DOUBLE_EQ(got[j], want[j]) << j;
}

TEST(Reference, SwigluByHand) {
  auto out = run(library::swiglu(), {{{0, 1, -2}}, {{2, 3, 0.5f}}}, {1, 3});
  std::vector<double> got = rowOf(out[0], 0);
  EXPECT_EQ(got[0], 0.0);
  EXPECT_DOUBLE_EQ(got[1], 1 / (1 + std::exp(-1.0)) * 3);
  EXPECT_DOUBLE_EQ(got[2], -2 / (1 + std::exp(2.0)) * 0.5);
}

TEST(Reference, RmsNormByHand) {
  // mean(x^2) = (9 + 16) / 2.
  auto out = run(library::rmsNorm(), {{{3, 4}}, {{1, 2}}}, {1, 2});
  double inv = 1 / std::sqrt(12.5 + kEps);
  std::vector<double> got = rowOf(out[0], 0);
  EXPECT_DOUBLE_EQ(got[0], 3 * inv);
  EXPECT_DOUBLE_EQ(got[1], 4 * inv * 2);
}

TEST(Reference, GeluResidualByHand) {
  auto out = run(library::geluResidual(), {{{0, 1}}, {{1, -1}}}, {1, 2});
  double k = static_cast<double>(0.7978845608f), a = static_cast<double>(0.044715f);
  std::vector<double> got = rowOf(out[0], 0);
  EXPECT_EQ(got[0], 1.0);
  EXPECT_DOUBLE_EQ(got[1], 0.5 * (1 + std::tanh(k * (1 + a))) - 1);
}

TEST(Reference, MaskedSoftmaxByHand) {
  // Row r sees columns c <= r mod 3. Row 0's invalid columns hold values
  // that would poison an unmasked max or exp.
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run(library::maskedSoftmax(), {{{1, 1000, nan}, {1, 2, 3}, {1, 2, 3}}}, {3, 3});
  EXPECT_EQ(rowOf(out[0], 0), (std::vector<double>{1, 0, 0}));
  double e1 = std::exp(1.0 - 2), e2 = std::exp(0.0);
  std::vector<double> r1 = rowOf(out[0], 1);
  EXPECT_DOUBLE_EQ(r1[0], e1 / (e1 + e2));
  EXPECT_DOUBLE_EQ(r1[1], e2 / (e1 + e2));
  EXPECT_EQ(r1[2], 0.0);
  double f1 = std::exp(-2.0), f2 = std::exp(-1.0), f3 = 1;
  std::vector<double> r2 = rowOf(out[0], 2);
  EXPECT_DOUBLE_EQ(r2[0], f1 / (f1 + f2 + f3));
  EXPECT_DOUBLE_EQ(r2[1], f2 / (f1 + f2 + f3));
  EXPECT_DOUBLE_EQ(r2[2], f3 / (f1 + f2 + f3));
}

// One output per expression, each written over all C columns.
Program outputs(const std::function<void(ProgramBuilder &)> &body) {
  ProgramBuilder b("t");
  body(b);
  return b.build();
}

TEST(Reference, IntegerDivisionAndModuloAreFloored) {
  // Columns hold -3 .. 3; divisors 2, -2 and 0.
  Program p = outputs([](ProgramBuilder &b) {
    Expr c = col(C, -3);
    b.output("div", toF32(c / 2));
    b.output("mod", toF32(c % 2));
    b.output("modneg", toF32(c % -2));
    b.output("div0", toF32(c / 0));
    b.output("mod0", toF32(c % 0));
  });
  auto out = evaluateReference(p, {}, {1, 7});
  using V = std::vector<double>;
  EXPECT_EQ(rowOf(out[0], 0), (V{-2, -1, -1, 0, 0, 1, 1}));
  EXPECT_EQ(rowOf(out[1], 0), (V{1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(rowOf(out[2], 0), (V{-1, 0, -1, 0, -1, 0, -1}));
  EXPECT_EQ(rowOf(out[3], 0), (V(7, 0)));
  EXPECT_EQ(rowOf(out[4], 0), (V(7, 0)));
}

TEST(Reference, IntegerArithmeticWrapsTo32Bits) {
  Program p = outputs([](ProgramBuilder &b) {
    b.output("sum", toF32(constantI32(INT32_MAX) + 1));
    b.output("neg", toF32(-constantI32(INT32_MIN)));
    b.output("row", toF32(row() * 10 + dim(C)));
  });
  auto out = evaluateReference(p, {}, {2, 3});
  EXPECT_EQ(out[0].at(1, 2), static_cast<double>(INT32_MIN));
  EXPECT_EQ(out[1].at(0, 0), static_cast<double>(INT32_MIN));
  EXPECT_EQ(rowOf(out[2], 1), (std::vector<double>{13, 13, 13}));
}

TEST(Reference, ToI32TruncatesAndSaturatesToIntMin) {
  Program p = outputs([](ProgramBuilder &b) { b.output("y", toF32(toI32(b.rows("x")))); });
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run(p, {{{2.7f, -2.7f, nan, 3e9f, -3e9f, -2147483648.0f}}}, {1, 6});
  double m = INT32_MIN;
  EXPECT_EQ(rowOf(out[0], 0), (std::vector<double>{2, -2, m, m, m, m}));
}

TEST(Reference, MinMaxFollowIeee2019) {
  Program p = outputs([](ProgramBuilder &b) {
    Expr x = b.rows("a"), y = b.rows("b");
    b.output("lo", min(x, y));
    b.output("hi", max(x, y));
  });
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run(p, {{{nan, 1, -0.0f, 0.0f, 2}}, {{1, nan, 0.0f, -0.0f, 3}}}, {1, 5});
  std::vector<double> lo = rowOf(out[0], 0), hi = rowOf(out[1], 0);
  EXPECT_TRUE(std::isnan(lo[0]) && std::isnan(lo[1]) && std::isnan(hi[0]) && std::isnan(hi[1]));
  EXPECT_TRUE(lo[2] == 0 && std::signbit(lo[2]));
  EXPECT_TRUE(lo[3] == 0 && std::signbit(lo[3]));
  EXPECT_TRUE(hi[2] == 0 && !std::signbit(hi[2]));
  EXPECT_TRUE(hi[3] == 0 && !std::signbit(hi[3]));
  EXPECT_EQ(lo[4], 2.0);
  EXPECT_EQ(hi[4], 3.0);
}

TEST(Reference, ReductionsFollowTheSameRules) {
  Program p = outputs([](ProgramBuilder &b) {
    Expr x = b.rows("x");
    b.output("max", rowmax(x));
    b.output("min", rowmin(x));
    b.output("sum", sum(x));
    b.output("mean", mean(x));
  });
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run(p, {{{-0.0f, 0.0f}, {0.0f, -0.0f}, {1, nan}, {1.5f, 2.5f}}}, {4, 2});
  for (int r = 0; r < 2; ++r) {
    EXPECT_FALSE(std::signbit(out[0].at(r, 0))) << r;
    EXPECT_TRUE(std::signbit(out[1].at(r, 1))) << r;
  }
  EXPECT_TRUE(std::isnan(out[0].at(2, 0)));
  EXPECT_TRUE(std::isnan(out[1].at(2, 1)));
  EXPECT_EQ(rowOf(out[2], 3), (std::vector<double>{4, 4})); // broadcast over the row
  EXPECT_EQ(rowOf(out[3], 3), (std::vector<double>{2, 2}));
}

TEST(Reference, ComparisonsAreFalseOnNaNExceptNe) {
  Program p = outputs([](ProgramBuilder &b) {
    Expr x = b.rows("x");
    Expr one = constant(1.0f), zero = constant(0.0f);
    b.output("lt", select(x < 1.0f, one, zero));
    b.output("ge", select(x >= 1.0f, one, zero));
    b.output("eq", select(eq(x, x), one, zero));
    b.output("ne", select(ne(x, x), one, zero));
  });
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = run(p, {{{nan, 0.5f}}}, {1, 2});
  using V = std::vector<double>;
  EXPECT_EQ(rowOf(out[0], 0), (V{0, 1}));
  EXPECT_EQ(rowOf(out[1], 0), (V{0, 0}));
  EXPECT_EQ(rowOf(out[2], 0), (V{0, 1}));
  EXPECT_EQ(rowOf(out[3], 0), (V{1, 0}));
}

TEST(Reference, ScalarsVectorsAndStridedRows) {
  Program p = outputs([](ProgramBuilder &b) {
    Expr x = b.rows("x"), s = b.scalar("s"), g = b.columns("g"); // declaration order
    b.output("y", x * s + g);
  });
  auto out = run(p, {{{1, 2}, {3, 4}}, {{10}}, {{0.5f, -0.5f}}}, {2, 2});
  EXPECT_EQ(rowOf(out[0], 0), (std::vector<double>{10.5, 19.5}));
  EXPECT_EQ(rowOf(out[0], 1), (std::vector<double>{30.5, 39.5}));
}

TEST(Reference, EmptyShapesAreLegal) {
  std::vector<BufferRef> noRows(2, BufferRef::matrix(nullptr, 0, 5));
  auto none = evaluateReference(library::swiglu(), noRows, {0, 5});
  EXPECT_EQ(none[0].rows, 0);
  EXPECT_EQ(none[0].cols, 5);
  EXPECT_TRUE(none[0].values.empty());
  std::vector<BufferRef> empty(2, BufferRef::matrix(nullptr, 3, 0));
  auto narrow = evaluateReference(library::swiglu(), empty, {3, 0});
  EXPECT_EQ(narrow[0].values.size(), 0u);
}

std::string bindErrorOf(const Program &p, const std::vector<BufferRef> &inputs, Shape shape) {
  try {
    evaluateReference(p, inputs, shape);
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    return e.what();
  }
  return "no error";
}

TEST(Reference, InputsAreCheckedAgainstTheShape) {
  std::vector<float> data(64, 1.0f);
  const float *d = data.data();
  Program rope = library::rope();
  EXPECT_EQ(bindErrorOf(rope, {BufferRef::matrix(d, 2, 4), BufferRef::matrix(d, 2, 2)}, {2, 4}),
            "program 'rope' expects 3 inputs (x, cos, sin), got 2");
  EXPECT_EQ(bindErrorOf(rope,
                        {BufferRef::matrix(d, 2, 4), BufferRef::matrix(d, 2, 3),
                         BufferRef::matrix(d, 2, 2)},
                        {2, 4}),
            "input 'cos': expected 2 x 2 columns, got 2 x 3");
  EXPECT_EQ(bindErrorOf(rope,
                        {BufferRef::matrix(d, 2, 5), BufferRef::matrix(d, 2, 2),
                         BufferRef::matrix(d, 2, 2)},
                        {2, 5}),
            "C/2 is not an integer for C = 5 (input 'cos')");
  EXPECT_EQ(bindErrorOf(rope,
                        {BufferRef::matrix(d, 2, 4, 3), BufferRef::matrix(d, 2, 2),
                         BufferRef::matrix(d, 2, 2)},
                        {2, 4}),
            "input 'x': row stride 3 is smaller than its 4 columns");
  EXPECT_EQ(bindErrorOf(rope,
                        {BufferRef::matrix(d, 2, 4), BufferRef::matrix(nullptr, 2, 2),
                         BufferRef::matrix(d, 2, 2)},
                        {2, 4}),
            "input 'cos': null data pointer");
  EXPECT_EQ(bindErrorOf(library::rmsNorm(), {BufferRef::matrix(d, 2, 4), BufferRef::vector(d, 3)},
                        {2, 4}),
            "input 'gamma': expected 1 x 4 columns, got 1 x 3");
}

} // namespace
} // namespace lanejit
