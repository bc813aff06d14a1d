// The verifier: ill-formed programs, built with the ir:: functions directly
// (the builder would refuse them), are rejected with a message naming the
// node or declaration; well-formed ones pass.
#include "support/testing.h"

#include <lanejit/error.h>
#include <lanejit/verify.h>

#include <gtest/gtest.h>

namespace lanejit {
namespace {

using Problems = std::vector<std::string>;
const Dim C = Dim::C();

// Before: x:[R,C] -> y:[R,C] = x, well formed. Tests break one thing.
Program identity() {
  Program p;
  p.name = "identity";
  p.inputs = {{"x", ParamKind::RowTensor, DType::F32, C}};
  p.outputs = {{"y", DType::F32, C}};
  p.writes = {{0, 0, C, ir::load(0, p.inputs[0], 0, C)}};
  return p;
}

// A program whose only write is `value` over [0, C).
Program writing(Expr value) {
  Program p = identity();
  p.writes[0].value = std::move(value);
  return p;
}

TEST(Verify, WellFormedProgramsPass) {
  EXPECT_EQ(verify(identity()), Problems{});
  Program halves = identity();
  Expr x = halves.writes[0].value;
  halves.writes = {{0, 0, C / 2, x.cols(0, C / 2)}, {0, C / 2, C / 2, x.cols(C / 2, C)}};
  EXPECT_EQ(verify(halves), Problems{});
  EXPECT_NO_THROW(verifyOrThrow(halves));
}

TEST(Verify, EmptyName) {
  Program p = identity();
  p.inputs[0].name = "";
  EXPECT_EQ(verify(p), Problems{"input: name is empty"});
}

TEST(Verify, NameNotAnIdentifier) {
  Program p = identity();
  p.outputs[0].name = "2y";
  EXPECT_EQ(verify(p), Problems{"output '2y': name is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"});
}

TEST(Verify, DuplicateNameAcrossInputsAndOutputs) {
  Program p = identity();
  p.outputs[0].name = "x";
  EXPECT_EQ(verify(p), Problems{"output 'x': name already used by input 'x'"});
}

TEST(Verify, NonF32Buffer) {
  Program p = identity();
  p.inputs.push_back({"k", ParamKind::ColVector, DType::I32, C});
  EXPECT_EQ(verify(p),
            Problems{"input 'k': type i32 is not supported (buffers are f32, bf16, f16 or i8)"});
}

TEST(Verify, StorageTypesAreBufferTypesOnly) {
  // bf16 and f16 buffers verify; their loads are f32 values.
  Program p = withStorage(identity(), DType::BF16);
  EXPECT_EQ(verify(p), Problems{});
  EXPECT_EQ(p.writes[0].value->type, DType::F32);
  EXPECT_EQ(verify(withStorage(identity(), DType::F16)), Problems{});
  EXPECT_EQ(test::verifyErrorOf([] { ir::constant(DType::BF16, 1); }),
            "const: bf16 is a storage type of inputs and outputs; constants are f32, i32 or bool");
  EXPECT_EQ(test::verifyErrorOf([] { withStorage(identity(), DType::I32); }),
            "program 'identity': cannot hold its buffers as i32 (f32, bf16 or f16)");
  // A node of a storage type can only be built by hand; the verifier names it.
  Program byHand = identity();
  Node load = *byHand.writes[0].value;
  load.type = DType::F16;
  byHand.writes[0].value = Expr(std::make_shared<const Node>(load));
  Problems problems = verify(byHand);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0], "%0: a value of type f16 (a storage type: loads widen it to f32)");
}

TEST(Verify, NegativeColumnCount) {
  Program p = identity();
  p.inputs.push_back({"v", ParamKind::ColVector, DType::F32, C * -1 - 1});
  p.inputs.push_back({"w", ParamKind::ColVector, DType::F32, -2});
  p.inputs.push_back({"ok", ParamKind::ColVector, DType::F32, C - 1}); // negative only for C = 0
  EXPECT_EQ(verify(p), (Problems{"input 'v': column count -C-1 is negative for every C",
                                 "input 'w': column count -2 is negative for every C"}));
}

TEST(Verify, LoadOfMissingInput) {
  Param ghost{"ghost", ParamKind::RowTensor, DType::F32, C};
  EXPECT_EQ(verify(writing(ir::load(3, ghost, 0, C))),
            Problems{"%0: load refers to input #3, but the program has 1 inputs"});
}

TEST(Verify, LoadTypeDiffersFromInput) {
  Param asI32{"x", ParamKind::RowTensor, DType::I32, C};
  Expr value = ir::unary(UnaryOp::ToF32, ir::load(0, asI32, 0, C));
  EXPECT_EQ(verify(writing(value)),
            Problems{"%0: load of input 'x' has type i32, but the input is f32"});
}

TEST(Verify, LoadKindDiffersFromInput) {
  Program scalarAsRows = identity();
  scalarAsRows.inputs[0].kind = ParamKind::Scalar;
  EXPECT_EQ(verify(scalarAsRows),
            Problems{"%0: load of input 'x' has a column range, but the input is a scalar"});

  Param asScalar{"x", ParamKind::Scalar, DType::F32, 0};
  EXPECT_EQ(verify(writing(ir::loadScalar(0, asScalar))),
            Problems{"%0: load of input 'x' has no column range, but the input is a row tensor"});
}

TEST(Verify, LoadPastTheInput) {
  Program p = identity();
  Expr wide = ir::load(0, p.inputs[0], 0, C + 1);
  EXPECT_EQ(verify(writing(ir::slice(wide, 1, C))),
            Problems{"%0: load of input 'x' columns [0, C+1) may exceed its C columns"});
  EXPECT_EQ(verify(writing(ir::load(0, p.inputs[0], C / 2, C))),
            Problems{"%0: load of input 'x' columns [C/2, 3*C/2) may exceed its C columns"});
}

TEST(Verify, LoadBeforeTheInput) {
  Program p = identity();
  EXPECT_EQ(verify(writing(ir::load(0, p.inputs[0], -1, C))),
            Problems{"%0: load of input 'x' columns [-1, C-1): begin may be negative"});
}

TEST(Verify, ProblemsNameTheNodeAsPrinted) {
  Program p = identity();
  Expr x = p.writes[0].value;
  Param ghost{"ghost", ParamKind::RowTensor, DType::F32, C};
  // Post-order: %0 = x, %1 = ghost load, %2 = add.
  Expr sum = ir::binary(BinaryOp::Add, x, ir::load(7, ghost, 0, C));
  EXPECT_EQ(verify(writing(sum)),
            Problems{"%1: load refers to input #7, but the program has 1 inputs"});
}

TEST(Verify, WriteToMissingOutput) {
  Program p = identity();
  p.writes[0].output = 1;
  EXPECT_EQ(verify(p), (Problems{"write #0: output index 1 is out of range (1 outputs)",
                                 "output 'y': columns [0, C) are never written"}));
}

TEST(Verify, WriteWithoutValue) {
  EXPECT_EQ(verify(writing(Expr())), Problems{"write #0 to output 'y': value is missing"});
}

TEST(Verify, WriteValueTypeDiffersFromOutput) {
  EXPECT_EQ(verify(writing(ir::colIndex(0, C))),
            Problems{"write #0 to output 'y': value type i32 does not match the output's f32"});
}

TEST(Verify, WriteValueLengthDiffersFromWrite) {
  Program p = identity();
  Expr half = ir::load(0, p.inputs[0], 0, C / 2);
  EXPECT_EQ(verify(writing(half)),
            Problems{"write #0 to output 'y': value has C/2 columns, but the write covers C"});
}

TEST(Verify, RowUniformWriteBroadcastsOverAnyLength) {
  EXPECT_EQ(verify(writing(ir::constant(DType::F32, 1))), Problems{});
}

TEST(Verify, WriteOutsideTheOutput) {
  Program p = identity();
  p.writes[0].begin = 1;
  EXPECT_EQ(verify(p), (Problems{"write #0 to output 'y': columns [1, C+1) may exceed the "
                                 "output's C columns",
                                 "output 'y': columns [0, C) are never written"}));
  p.writes[0].begin = -1;
  EXPECT_EQ(verify(p), (Problems{"write #0 to output 'y': columns [-1, C-1): begin may be negative",
                                 "output 'y': columns [0, C) are never written"}));
}

TEST(Verify, OverlappingWrites) {
  Program p = identity();
  Expr c = ir::constant(DType::F32, 0);
  p.writes = {{0, 0, C / 2, c}, {0, C / 4, C * 3 / 4, c}};
  EXPECT_EQ(verify(p), Problems{"output 'y': writes #0 [0, C/2) and #1 [C/4, C) may overlap"});
  p.writes = {{0, 0, C, c}, {0, 0, C, c}};
  EXPECT_EQ(verify(p), Problems{"output 'y': writes #0 [0, C) and #1 [0, C) may overlap"});
}

TEST(Verify, UncoveredColumnsAtTheEnd) {
  Program p = identity();
  Expr x = p.writes[0].value;
  p.writes = {{0, 0, C / 2, x.cols(0, C / 2)}};
  EXPECT_EQ(verify(p), Problems{"output 'y': columns [C/2, C) are never written"});
}

TEST(Verify, UncoveredColumnsInTheMiddle) {
  Program p = identity();
  Expr c = ir::constant(DType::F32, 0);
  p.writes = {{0, C * 3 / 4, C / 4, c}, {0, 0, C / 4, c}, {0, C / 2, C / 4, c}};
  EXPECT_EQ(verify(p), Problems{"output 'y': columns [C/4, C/2) are never written"});
}

TEST(Verify, NoOutputs) {
  Program p = identity();
  p.outputs.clear();
  p.writes.clear();
  EXPECT_EQ(verify(p), Problems{"program has no outputs"});
}

TEST(Verify, EveryProblemIsReportedAndThrownTogether) {
  Program p = identity();
  p.inputs[0].name = "bad name";
  p.writes[0].len = C / 2;
  Problems problems = verify(p);
  ASSERT_EQ(problems.size(), 3u) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems[0], "input 'bad name': name is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  EXPECT_EQ(problems[1], "write #0 to output 'y': value has C columns, but the write covers C/2");
  EXPECT_EQ(problems[2], "output 'y': columns [C/2, C) are never written");
  try {
    verifyOrThrow(p);
    FAIL() << "expected an Error";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Verify);
    EXPECT_EQ(std::string(e.what()), problems[0] + "\n" + problems[1] + "\n" + problems[2]);
  }
}

} // namespace
} // namespace lanejit

namespace lanejit {
namespace {

TEST(Verify, BoundsTheNumberOfWritesPerOutput) {
  Program p;
  p.name = "many";
  p.inputs = {Param{"x"}};
  p.outputs = {Output{"y", DType::F32, Dim(2000)}};
  Expr one = ir::constant(DType::F32, 1);
  for (int64_t c = 0; c < 2000; ++c)
    p.writes.push_back(Write{0, c, 1, one});
  std::vector<std::string> problems = verify(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "output 'y': 2000 writes; at most 1024 are supported");
}

} // namespace
} // namespace lanejit
