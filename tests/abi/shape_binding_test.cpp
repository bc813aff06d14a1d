// bindShape / evaluateDim: (R, C) inference and every rejection, each with
// the message that names the buffer.
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/shape_binding.h>

#include <gtest/gtest.h>

#include <vector>

namespace lanejit {
namespace {

const Dim C = Dim::C();
using Refs = std::vector<BufferRef>;

std::vector<float> storage(100000, 0.0f);
const float *d = storage.data();

BufferRef mat(int64_t rows, int64_t cols, int64_t stride = 0) {
  return BufferRef::matrix(d, rows, cols, stride);
}

std::string errorOf(const Program &p, const Refs &inputs, const Refs &outputs) {
  try {
    bindShape(p, inputs, outputs);
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    return e.what();
  }
  return "no error";
}

Shape bind(const Program &p, const Refs &inputs, const Refs &outputs) {
  return bindShape(p, inputs, outputs);
}

bool operator==(Shape a, Shape b) {
  return a.rows == b.rows && a.cols == b.cols;
}

TEST(Bind, InfersRowsAndColumns) {
  Program rope = library::rope();
  Shape s = bind(rope, {mat(17, 66), mat(17, 33), mat(17, 33)}, {mat(17, 66)});
  EXPECT_EQ(s.rows, 17);
  EXPECT_EQ(s.cols, 66);
  // Outputs may be left out; padding in the stride is fine.
  EXPECT_TRUE(bind(rope, {mat(3, 10, 16), mat(3, 5), mat(3, 5, 7)}, {}) == (Shape{3, 10}));
}

TEST(Bind, InfersCFromTheFirstBufferThatShowsIt) {
  // cos:[R, C/2] comes first: C = 2 * 33.
  ProgramBuilder b("halfFirst");
  Expr c = b.rows("c", C / 2), x = b.rows("x");
  b.write("y", 0, x);
  Program p = b.build();
  EXPECT_TRUE(bind(p, {mat(2, 33), mat(2, 66)}, {mat(2, 66)}) == (Shape{2, 66}));
  EXPECT_EQ(errorOf(p, {mat(2, 33), mat(2, 67)}, {mat(2, 66)}),
            "input 'x': expected 2 x 66 columns, got 2 x 67");
}

TEST(Bind, InfersRowsFromOutputsWhenNoInputHasRows) {
  ProgramBuilder b("bias");
  Expr g = b.columns("g");
  b.output("y", g * 2.0f);
  Program p = b.build();
  EXPECT_TRUE(bind(p, {BufferRef::vector(d, 8)}, {mat(5, 8)}) == (Shape{5, 8}));
  EXPECT_EQ(errorOf(p, {BufferRef::vector(d, 8)}, {}),
            "program 'bias': cannot infer the row count R (no row tensor input, and no outputs "
            "given)");
}

TEST(Bind, EmptyProblemsAreLegal) {
  Program swiglu = library::swiglu();
  BufferRef none = BufferRef::matrix(nullptr, 0, 9);
  EXPECT_TRUE(bind(swiglu, {none, none}, {none}) == (Shape{0, 9}));
  BufferRef narrow = BufferRef::matrix(nullptr, 4, 0);
  EXPECT_TRUE(bind(swiglu, {narrow, narrow}, {narrow}) == (Shape{4, 0}));
}

TEST(Bind, ConstantColumnCountsNeedNoC) {
  ProgramBuilder b("fixed");
  Expr x = b.rows("x", 4);
  b.output("y", x + 1.0f);
  EXPECT_TRUE(bind(b.build(), {mat(2, 4)}, {mat(2, 4)}) == (Shape{2, 0}));
}

TEST(Bind, CThatNoBufferShowsIsAnError) {
  ProgramBuilder b("usesC");
  Expr s = b.scalar("s");
  b.write("y", 0, s * toF32(dim(C)), 4);
  Program p = b.build();
  EXPECT_EQ(errorOf(p, {BufferRef::scalar(d)}, {mat(2, 4)}),
            "cannot infer C: no buffer's column count depends on C, but %1 uses C");
}

TEST(Bind, WrongBufferCounts) {
  Program rope = library::rope();
  EXPECT_EQ(errorOf(rope, {mat(2, 4), mat(2, 2)}, {mat(2, 4)}),
            "program 'rope' expects 3 inputs (x, cos, sin), got 2");
  EXPECT_EQ(errorOf(rope, {mat(2, 4), mat(2, 2), mat(2, 2)}, {mat(2, 4), mat(2, 4)}),
            "program 'rope' expects 1 output (y), got 2");
}

TEST(Bind, WrongColumnsOrRows) {
  Program rope = library::rope();
  EXPECT_EQ(errorOf(rope, {mat(17, 66), mat(17, 34), mat(17, 33)}, {mat(17, 66)}),
            "input 'cos': expected 17 x 33 columns, got 17 x 34");
  EXPECT_EQ(errorOf(rope, {mat(17, 66), mat(17, 33), mat(16, 33)}, {mat(17, 66)}),
            "input 'sin': expected 17 x 33 columns, got 16 x 33");
  EXPECT_EQ(errorOf(rope, {mat(17, 66), mat(17, 33), mat(17, 33)}, {mat(17, 65)}),
            "output 'y': expected 17 x 66 columns, got 17 x 65");
}

TEST(Bind, OddCForAHalfWidthBuffer) {
  EXPECT_EQ(errorOf(library::rope(), {mat(17, 65), mat(17, 32), mat(17, 32)}, {mat(17, 65)}),
            "C/2 is not an integer for C = 65 (input 'cos')");
}

TEST(Bind, NoCMatchesTheBuffer) {
  ProgramBuilder b("wide");
  Expr x = b.rows("x", C * 2), y = b.rows("z", C + 5);
  b.output("y", x.cols(0, C) + 1.0f);
  Program p = b.build();
  EXPECT_EQ(errorOf(p, {mat(2, 33), mat(2, 38)}, {}),
            "input 'x': 33 columns do not match 2*C for any integer C >= 0");
  ProgramBuilder b2("offset");
  Expr z = b2.rows("z", C + 5);
  b2.output("y", z.cols(0, C));
  EXPECT_EQ(errorOf(b2.build(), {mat(2, 3)}, {}),
            "input 'z': 3 columns do not match C+5 for any integer C >= 0");
}

TEST(Bind, StrideSmallerThanColumns) {
  EXPECT_EQ(errorOf(library::swiglu(), {mat(4, 12, 10), mat(4, 12)}, {}),
            "input 'x': row stride 10 is smaller than its 12 columns");
  EXPECT_EQ(errorOf(library::swiglu(), {mat(4, 12), mat(4, 12)}, {mat(4, 12, 11)}),
            "output 'y': row stride 11 is smaller than its 12 columns");
}

TEST(Bind, NullData) {
  Program swiglu = library::swiglu();
  EXPECT_EQ(errorOf(swiglu, {mat(4, 12), mat(4, 12)}, {BufferRef::matrix(nullptr, 4, 12)}),
            "output 'y': null data pointer");
  EXPECT_EQ(
      errorOf(library::layerNorm(), {mat(2, 8), BufferRef::vector(nullptr, 8), mat(1, 8)}, {}),
      "input 'gamma': null data pointer");
  ProgramBuilder b("scaled");
  Expr x = b.rows("x"), s = b.scalar("s");
  b.output("y", x * s);
  EXPECT_EQ(errorOf(b.build(), {mat(2, 8), BufferRef::scalar(nullptr)}, {}),
            "input 's': null data pointer");
}

TEST(Bind, ColumnVectorShape) {
  Program ln = library::layerNorm();
  EXPECT_EQ(errorOf(ln, {mat(2, 12), BufferRef::vector(d, 13), BufferRef::vector(d, 12)}, {}),
            "input 'gamma': expected a column vector of 1 x 12 columns, got 1 x 13");
  EXPECT_EQ(errorOf(ln, {mat(2, 12), BufferRef::vector(d, 12), mat(2, 12)}, {}),
            "input 'beta': expected a column vector of 1 x 12 columns, got 2 x 12");
}

TEST(Bind, NegativeRows) {
  EXPECT_EQ(errorOf(library::swiglu(), {mat(-1, 4), mat(-1, 4)}, {}),
            "input 'x': negative row count -1");
}

TEST(Bind, WriteSplitAtAFractionOfC) {
  // No buffer is C/2 wide, but the writes split y at C/2.
  ProgramBuilder b("halves");
  Expr x = b.rows("x");
  b.write("y", 0, x.cols(C / 2, C) - x.cols(0, C / 2));
  b.write("y", C / 2, x.cols(0, C / 2) + x.cols(C / 2, C));
  Program p = b.build();
  EXPECT_TRUE(bind(p, {mat(2, 6)}, {mat(2, 6)}) == (Shape{2, 6}));
  EXPECT_EQ(errorOf(p, {mat(2, 5)}, {mat(2, 5)}),
            "C/2 is not an integer for C = 5 (write #0 to output 'y')");
}

TEST(EvaluateDim, NonIntegerOrNegative) {
  EXPECT_EQ(evaluateDim(C / 2, 66, "here"), 33);
  EXPECT_EQ(evaluateDim(C - 5, 5, "here"), 0);
  try {
    evaluateDim(C / 2, 65, "input 'cos'");
    FAIL() << "expected an Error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    EXPECT_EQ(std::string(e.what()), "C/2 is not an integer for C = 65 (input 'cos')");
  }
  try {
    evaluateDim(C - 5, 3, "input 'x'");
    FAIL() << "expected an Error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()), "C-5 is negative (-2) for C = 3 (input 'x')");
  }
}

} // namespace
} // namespace lanejit
