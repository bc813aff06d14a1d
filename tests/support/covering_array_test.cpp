// The covering array the switch sweep relies on: Before (factor levels,
// strength) -> coveringArray -> Expected (every interaction present,
// required rows first, far fewer rows than the product).
#include "support/covering_array.h"

#include <gtest/gtest.h>

namespace lanejit::test {
namespace {

TEST(CoveringArray, FullStrengthIsTheWholeProduct) {
  std::vector<int> levels{2, 3, 2};
  auto rows = coveringArray(levels, 3);
  EXPECT_EQ(rows.size(), 12u);
  EXPECT_TRUE(coversAllInteractions(levels, 3, rows));
}

TEST(CoveringArray, StrengthThreeOverManySwitchesIsSmall) {
  std::vector<int> levels(13, 2);
  levels[0] = 3;
  CoveringRow defaults(13, 0);
  auto rows = coveringArray(levels, 3, {defaults});
  std::string missed;
  EXPECT_TRUE(coversAllInteractions(levels, 3, rows, &missed)) << missed;
  EXPECT_EQ(rows.front(), defaults);
  EXPECT_LT(rows.size(), 60u); // the product has 3 * 2^12 = 12288 rows
  EXPECT_EQ(rows, coveringArray(levels, 3, {defaults})) << "not deterministic";
}

TEST(CoveringArray, CheckerNamesAMissingCombination) {
  // The classic four rows covering every pair of three switches.
  std::vector<int> levels{2, 2, 2};
  std::vector<CoveringRow> rows{{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};
  ASSERT_TRUE(coversAllInteractions(levels, 2, rows));
  EXPECT_FALSE(coversAllInteractions(levels, 3, rows));
  rows.erase(rows.begin() + 2); // the only row with factor 0 on and factor 1 off
  std::string missed;
  EXPECT_FALSE(coversAllInteractions(levels, 2, rows, &missed));
  EXPECT_EQ(missed, "factor 0 = 1, factor 1 = 0");
}

TEST(CoveringArray, RejectsAStrengthAboveTheFactorCount) {
  EXPECT_THROW(coveringArray({2, 2}, 3), std::invalid_argument);
}

} // namespace
} // namespace lanejit::test
