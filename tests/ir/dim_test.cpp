// Dim: exact rational-affine arithmetic in C, printing, solving and the
// "provably <=" facts the verifier relies on.
#include <lanejit/dim.h>

#include <gtest/gtest.h>

namespace lanejit {
namespace {

const Dim C = Dim::C();

TEST(Dim, ArithmeticIsExact) {
  EXPECT_EQ(C / 2 + C / 2, C);
  EXPECT_EQ(C - C / 2, C / 2);
  EXPECT_EQ((C + 1) / 2 * 2, C + 1);
  EXPECT_EQ(C * 3 / 4 + C / 4, C);
  EXPECT_EQ(Dim(3) * 2, Dim(6));
  EXPECT_EQ(C - C, Dim(0));
  EXPECT_TRUE((C - C).isConstant());
}

TEST(Dim, AffineIsNormalised) {
  EXPECT_EQ(Dim::affine(2, 4, 4), Dim::affine(1, 2, 2));
  EXPECT_EQ(Dim::affine(-2, 0, -4), C / 2);
  Dim d = Dim::affine(6, 3, 9);
  EXPECT_EQ(d.coeff(), 2);
  EXPECT_EQ(d.offset(), 1);
  EXPECT_EQ(d.denom(), 3);
  EXPECT_EQ(Dim::affine(2, 4, 4).hash(), Dim::affine(1, 2, 2).hash());
  EXPECT_NE(C.hash(), (C / 2).hash());
}

TEST(Dim, PrintsAsTheGrammarReads) {
  EXPECT_EQ(C.str(), "C");
  EXPECT_EQ((C / 2).str(), "C/2");
  EXPECT_EQ(((C + 1) / 2).str(), "(C+1)/2");
  EXPECT_EQ((C - 1).str(), "C-1");
  EXPECT_EQ((C * 2).str(), "2*C");
  EXPECT_EQ((C * -1).str(), "-C");
  EXPECT_EQ((C * 3 / 4).str(), "3*C/4");
  EXPECT_EQ(Dim(7).str(), "7");
  EXPECT_EQ(Dim(-3).str(), "-3");
}

TEST(Dim, EvaluatesOnlyToIntegers) {
  EXPECT_EQ((C / 2).evaluate(66), 33);
  EXPECT_EQ((C / 2).evaluate(65), std::nullopt);
  EXPECT_EQ(((C + 1) / 2).evaluate(65), 33);
  EXPECT_EQ((C - 5).evaluate(3), -2);
  EXPECT_EQ(Dim(4).evaluate(1000), 4);
}

TEST(Dim, SolvesForC) {
  EXPECT_EQ(C.solveFor(17), 17);
  EXPECT_EQ((C / 2).solveFor(33), 66);
  EXPECT_EQ((C * 2).solveFor(33), std::nullopt);
  EXPECT_EQ((C + 5).solveFor(3), -2);
  EXPECT_EQ(Dim(4).solveFor(4), std::nullopt); // a constant does not determine C
}

TEST(Dim, ValuesOutsideInt64AreNotValues) {
  // C comes from a caller's buffer: 2*C or C/2's C may not be an int64_t.
  const int64_t big = int64_t{1} << 62;
  EXPECT_EQ((C * 2).evaluate(big), std::nullopt);
  EXPECT_EQ((C + 1).evaluate(INT64_MAX), std::nullopt);
  EXPECT_EQ((C - 1).evaluate(INT64_MIN), std::nullopt);
  EXPECT_EQ((C * 2).evaluate(big - 1), 2 * (big - 1));
  EXPECT_EQ((C / 2).solveFor(big), std::nullopt);
  EXPECT_EQ((C + 1).solveFor(INT64_MIN), std::nullopt);
  EXPECT_EQ((Dim(5) - C).solveFor(INT64_MIN + 5), std::nullopt) << "-INT64_MIN";
  EXPECT_EQ((C / 2).solveFor(big - 1), 2 * (big - 1));
}

TEST(Dim, ProvablyLessEqualHoldsForEveryC) {
  EXPECT_TRUE(provablyLessEqual(0, C));
  EXPECT_TRUE(provablyLessEqual(C / 2, C));
  EXPECT_TRUE(provablyLessEqual(C - 1, C));
  EXPECT_TRUE(provablyLessEqual(C, C + 1));
  EXPECT_TRUE(provablyLessEqual(C, C));
  EXPECT_TRUE(provablyLessEqual(C * -1, 0));
  EXPECT_FALSE(provablyLessEqual(C, C / 2));
  EXPECT_FALSE(provablyLessEqual(C + 1, C));
  EXPECT_FALSE(provablyLessEqual(1, C)); // C may be 0
  EXPECT_FALSE(provablyLessEqual(C, 4));
}

} // namespace
} // namespace lanejit
