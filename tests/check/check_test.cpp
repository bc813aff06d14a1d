// The shared check library: fixtures, guarded buffers, hashing, and the
// comparison with the oracle. Everything else's tests trust these.
#include <lanejit/check.h>
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace lanejit::check {
namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

TEST(Fixtures, MatchTheBriefFormulasRoundedFromDouble) {
  // Before: flat indices; Expected: f64 formula rounded once to f32.
  EXPECT_EQ(fixtureValue("x", 0), 0.0f);
  EXPECT_EQ(fixtureValue("x", 10), static_cast<float>(1.6785015274912178)); // 1.7*sin(1.73)
  EXPECT_EQ(fixtureValue("x", 123), static_cast<float>(1.7 * std::sin(0.173 * 123)));
  EXPECT_EQ(fixtureValue("cos", 77), static_cast<float>(std::cos(0.013 * 77)));
  EXPECT_EQ(fixtureValue("sin", 77), static_cast<float>(std::sin(0.013 * 77)));
  EXPECT_EQ(fixtureValue("gamma", 5), static_cast<float>(1 + 0.2 * std::cos(0.113 * 5)));
  EXPECT_EQ(fixtureValue("beta", 9), static_cast<float>(0.1 * std::sin(0.071 * 9)));
  EXPECT_EQ(fixtureValue("u", 4096), static_cast<float>(0.9 * std::cos(0.031 * 4096)));
  EXPECT_EQ(fixtureValue("gamma", 0), 1.2f);
}

TEST(Fixtures, UnknownNamesUseTheXFormula) {
  EXPECT_EQ(fixtureValue("scores", 31), fixtureValue("x", 31));
}

TEST(MakeCase, FixturesUseTheDenseFlatIndexAndPaddingIsNaN) {
  // Before: RoPE at 3x6 with 5 floats of row padding (cos/sin are [3, 3]).
  Case c = makeCase(library::rope(), {3, 6}, Fill::Fixture, 1, /*row_stride_pad=*/5);
  const GuardedBuffer &x = c.inputs[c.program.inputIndex("x")];
  const GuardedBuffer &cos = c.inputs[c.program.inputIndex("cos")];
  // Expected: shapes from the declarations, index r*cols + c, NaN padding.
  EXPECT_EQ(x.rows(), 3);
  EXPECT_EQ(x.cols(), 6);
  EXPECT_EQ(x.rowStride(), 11);
  EXPECT_EQ(cos.cols(), 3);
  EXPECT_EQ(x.at(2, 4), fixtureValue("x", 2 * 6 + 4));
  EXPECT_EQ(cos.at(1, 2), fixtureValue("cos", 1 * 3 + 2));
  EXPECT_TRUE(std::isnan(x.data()[6]));
  ASSERT_EQ(c.outputs.size(), 1u);
  EXPECT_EQ(c.outputs[0].cols(), 6);
  EXPECT_TRUE(std::isnan(c.outputs[0].at(2, 5)));
}

TEST(MakeCase, ColumnVectorsAndScalars) {
  ProgramBuilder b("affine");
  Expr x = b.rows("x"), gamma = b.columns("gamma"), eps = b.scalar("eps");
  b.output("y", x * gamma + eps);
  Case c = makeCase(b.build(), {4, 9});
  EXPECT_EQ(c.inputs[1].rows(), 1);
  EXPECT_EQ(c.inputs[1].cols(), 9);
  EXPECT_EQ(c.inputs[1].at(0, 8), fixtureValue("gamma", 8));
  EXPECT_EQ(c.inputs[2].elements(), 1);
  EXPECT_EQ(c.inputs[2].data()[0], 1e-5f);
}

TEST(MakeCase, RandomFillIsSeededAndInRange) {
  Case a = makeCase(library::swiglu(), {5, 33}, Fill::Random, 7);
  Case b = makeCase(library::swiglu(), {5, 33}, Fill::Random, 7);
  Case other = makeCase(library::swiglu(), {5, 33}, Fill::Random, 8);
  EXPECT_EQ(a.inputs[0].hash(), b.inputs[0].hash());
  EXPECT_NE(a.inputs[0].hash(), other.inputs[0].hash());
  EXPECT_NE(a.inputs[0].hash(), a.inputs[1].hash()); // inputs differ from each other
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t col = 0; col < 33; ++col) {
      EXPECT_GE(a.inputs[0].at(r, col), -2.0f);
      EXPECT_LE(a.inputs[0].at(r, col), 2.0f);
    }
}

TEST(MakeCase, RejectsShapesTheProgramCannotBind) {
  EXPECT_THROW(makeCase(library::rope(), {2, 7}), Error); // C/2 of odd C
}

TEST(GuardedBuffer, PayloadIsAlignedAndGuardsStartIntact) {
  GuardedBuffer b(3, 5, 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  EXPECT_EQ(b.elements(), 2 * 7 + 5);
  EXPECT_TRUE(b.guardsIntact());
  b.at(2, 4) = 1.0f; // the last element is payload, not guard
  b.data()[0] = 1.0f;
  EXPECT_TRUE(b.guardsIntact());
}

TEST(GuardedBuffer, DetectsAWriteOnePastTheEnd) {
  GuardedBuffer b(3, 5, 7);
  b.data()[b.elements()] = 0.0f;
  EXPECT_FALSE(b.guardsIntact());
}

TEST(GuardedBuffer, DetectsAWriteOneBeforeTheStart) {
  GuardedBuffer b(3, 5, 7);
  b.data()[-1] = std::numeric_limits<float>::quiet_NaN(); // even a NaN is caught
  EXPECT_FALSE(b.guardsIntact());
}

TEST(GuardedBuffer, CopiesAreDeepAndMovesTransferOwnership) {
  GuardedBuffer a(2, 3, 3);
  a.fill(1.5f);
  GuardedBuffer copy = a;
  copy.at(0, 0) = 2.0f;
  EXPECT_EQ(a.at(0, 0), 1.5f);
  EXPECT_TRUE(copy.guardsIntact());
  GuardedBuffer moved = std::move(copy);
  EXPECT_EQ(moved.at(0, 0), 2.0f);
  EXPECT_EQ(copy.data(), nullptr); // NOLINT(bugprone-use-after-move): documented state
  moved = GuardedBuffer(1, 1, 1);
  EXPECT_EQ(moved.elements(), 1);
}

TEST(GuardedBuffer, RefusesAShapeWhoseSizeOverflows) {
  // (3 - 1) * 2^62 floats wrap to a small allocation without the check.
  try {
    GuardedBuffer b(3, 8, int64_t{1} << 62);
    ADD_FAILURE() << "accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Bind);
    EXPECT_NE(std::string(e.what()).find("overflows"), std::string::npos) << e.what();
  }
  EXPECT_THROW(GuardedBuffer(int64_t{1} << 62, 8, 8), Error);
}

TEST(GuardedBuffer, FillCoversStridePadding) {
  GuardedBuffer b(2, 3, 5);
  b.fill(4.0f);
  EXPECT_EQ(b.data()[3], 4.0f);
  EXPECT_TRUE(b.guardsIntact());
}

TEST(Hash, ChangesWhenOneBitFlips) {
  GuardedBuffer b(4, 8, 8);
  b.fill(0.25f);
  uint64_t before = b.hash();
  uint32_t bits = bitsOf(b.at(3, 7)) ^ 1u;
  std::memcpy(&b.at(3, 7), &bits, sizeof bits);
  EXPECT_NE(b.hash(), before);
}

TEST(Hash, IsFnv1a) {
  EXPECT_EQ(hashBytes("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(hashBytes("a", 1), 0xaf63dc4c8601ec8cull);
}

// y = x, so the oracle's answer is the input itself.
Case identityCase() {
  ProgramBuilder b("identity");
  b.output("y", b.rows("x"));
  Case c = makeCase(b.build(), {3, 4});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t col = 0; col < 4; ++col)
      c.outputs[0].at(r, col) = c.inputs[0].at(r, col);
  return c;
}

TEST(Compare, ExactOutputsPass) {
  Comparison result = compareWithReference(identityCase());
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.checked, 12);
  EXPECT_EQ(result.max_abs_error, 0.0);
  EXPECT_TRUE(result.first_failure.empty());
}

TEST(Compare, OneUlpBeyondToleranceFails) {
  Case c = identityCase();
  float want = c.inputs[0].at(1, 2);
  double bound = kTolerance + kTolerance * std::abs(static_cast<double>(want));
  // The largest f32 still within tolerance above `want`, and the next one.
  float inside = static_cast<float>(want + bound);
  while (std::abs(static_cast<double>(inside) - want) > bound)
    inside = std::nextafter(inside, -INFINITY);
  float outside = std::nextafter(inside, INFINITY);
  ASSERT_GT(std::abs(static_cast<double>(outside) - want), bound);

  c.outputs[0].at(1, 2) = inside;
  EXPECT_TRUE(compareWithReference(c).ok());
  c.outputs[0].at(1, 2) = outside;
  Comparison result = compareWithReference(c);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.failures, 1);
  EXPECT_EQ(result.first_failure.rfind("y[1,2]: got ", 0), 0u) << result.first_failure;
  EXPECT_GT(result.max_abs_error, bound);
}

TEST(Compare, NaNWhereTheOracleIsFiniteFails) {
  Case c = identityCase();
  c.outputs[0].at(2, 3) = std::numeric_limits<float>::quiet_NaN();
  Comparison result = compareWithReference(c);
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.first_failure.find("y[2,3]"), std::string::npos);
}

TEST(Compare, NaNMatchesNaNAndInfinitiesMustBeEqual) {
  Case c = identityCase();
  float inf = std::numeric_limits<float>::infinity();
  c.inputs[0].at(0, 0) = std::numeric_limits<float>::quiet_NaN();
  c.outputs[0].at(0, 0) = std::numeric_limits<float>::quiet_NaN();
  c.inputs[0].at(0, 1) = inf;
  c.outputs[0].at(0, 1) = inf;
  EXPECT_TRUE(compareWithReference(c).ok());
  c.outputs[0].at(0, 1) = -inf;
  EXPECT_FALSE(compareWithReference(c).ok());
}

TEST(Compare, UntouchedOutputsFail) {
  // Before: outputs as makeCase leaves them (NaN). Expected: every element fails.
  Case c = makeCase(library::swiglu(), {2, 5});
  Comparison result = compareWithReference(c);
  EXPECT_EQ(result.failures, 10);
}

TEST(Helpers, SweepColumnsCoverEveryTail) {
  // Before: W = 16; Expected: C mod W and C mod 4 take every value, and with
  // multiple 2 (RoPE) so does (C/2) mod W.
  std::vector<bool> seen(16), seen_half(16);
  for (int64_t cols : test::sweepColumns(16))
    seen[cols % 16] = true;
  for (int64_t cols : test::sweepColumns(16, 2)) {
    EXPECT_EQ(cols % 2, 0);
    seen_half[(cols / 2) % 16] = true;
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 16);
  EXPECT_EQ(std::count(seen_half.begin(), seen_half.end(), true), 16);
  EXPECT_EQ(test::sweepShapes(4).size(), test::sweepColumns(4).size());
}

TEST(Helpers, RunMatchesReferenceAcceptsACorrectKernelAndNamesABadOutput) {
  Program program = library::swiglu();
  EXPECT_TRUE(test::compileAndCheck(program, {3, 37}, CompileOptions::fromEnvironment(),
                                    Fill::Random, 5, /*row_stride_pad=*/3));
  Case c = makeCase(program, {2, 5});
  ::testing::AssertionResult unrun = test::matchesReference(c);
  EXPECT_FALSE(unrun);
  EXPECT_NE(std::string(unrun.message()).find("10 of 10"), std::string::npos) << unrun.message();
}

} // namespace
} // namespace lanejit::check
