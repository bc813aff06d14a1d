// The protocol's statistics on hand-made samples: medians of odd and even
// counts, paired per-round ratios with their range and wins.
#include "statistics.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <vector>

namespace lanejit::bench {
namespace {

TEST(BenchStatistics, MedianOfAnOddCountIsTheMiddleValue) {
  std::vector<double> samples = {5, 1, 4, 2, 3, 7, 6}; // unsorted on purpose
  EXPECT_DOUBLE_EQ(median(samples), 4);
}

TEST(BenchStatistics, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  std::vector<double> samples = {4, 1, 10, 2};
  EXPECT_DOUBLE_EQ(median(samples), 3); // (2 + 4) / 2
}

TEST(BenchStatistics, MedianOfOneValueIsThatValue) {
  std::vector<double> samples = {0.25};
  EXPECT_DOUBLE_EQ(median(samples), 0.25);
}

TEST(BenchStatistics, MedianOfNothingIsAnError) {
  std::vector<double> none;
  EXPECT_THROW(median(none), Error);
}

TEST(BenchStatistics, RatioIsTheMedianOfPerRoundRatiosNotTheRatioOfMedians) {
  // Per-round ratios: 1/2 = 0.5, 3/1 = 3, 2/4 = 0.5 -> median 0.5.
  // The ratio of the medians would be median(1,3,2)/median(2,1,4) = 2/2 = 1.
  std::vector<double> a = {1, 3, 2}, b = {2, 1, 4};
  RatioSummary s = pairedRatios(a, b);
  EXPECT_DOUBLE_EQ(s.median, 0.5);
  EXPECT_DOUBLE_EQ(s.min, 0.5);
  EXPECT_DOUBLE_EQ(s.max, 3);
  EXPECT_EQ(s.wins, 2);
  EXPECT_EQ(s.rounds, 3);
  EXPECT_NE(s.median, median(a) / median(b));
}

TEST(BenchStatistics, RatioOfAnEvenRoundCountAveragesTheMiddleRatios) {
  std::vector<double> a = {1, 2, 3, 8}, b = {4, 4, 2, 4}; // 0.25, 0.5, 1.5, 2
  RatioSummary s = pairedRatios(a, b);
  EXPECT_DOUBLE_EQ(s.median, 1.0);
  EXPECT_DOUBLE_EQ(s.min, 0.25);
  EXPECT_DOUBLE_EQ(s.max, 2);
  EXPECT_EQ(s.wins, 2);
}

TEST(BenchStatistics, ATieIsNotAWin) {
  std::vector<double> a = {2, 2}, b = {2, 3};
  EXPECT_EQ(pairedRatios(a, b).wins, 1);
}

TEST(BenchStatistics, UnpairedRoundsAreAnError) {
  std::vector<double> a = {1, 2}, b = {1};
  EXPECT_THROW(pairedRatios(a, b), Error);
}

} // namespace
} // namespace lanejit::bench
