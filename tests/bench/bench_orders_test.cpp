// The visit orders: every permutation for up to three variants; a balanced
// design (every variant in every position equally often) for more.
#include "orders.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

namespace lanejit::bench {
namespace {

bool isPermutation(std::vector<int> order, int n) {
  std::sort(order.begin(), order.end());
  std::vector<int> expected(n);
  std::iota(expected.begin(), expected.end(), 0);
  return order == expected;
}

// counts[variant][position] over all rounds.
std::vector<std::vector<int>> positionCounts(const std::vector<std::vector<int>> &orders, int n) {
  std::vector<std::vector<int>> counts(n, std::vector<int>(n, 0));
  for (const std::vector<int> &order : orders)
    for (int position = 0; position < n; ++position)
      ++counts[order[position]][position];
  return counts;
}

TEST(BenchOrders, UpToThreeVariantsGetEveryPermutationOnce) {
  for (int n = 1; n <= 3; ++n) {
    std::vector<std::vector<int>> orders = visitOrders(n);
    std::set<std::vector<int>> distinct(orders.begin(), orders.end());
    int factorial = n == 1 ? 1 : n == 2 ? 2 : 6;
    EXPECT_EQ(orders.size(), static_cast<size_t>(factorial)) << n << " variants";
    EXPECT_EQ(distinct.size(), orders.size()) << n << " variants: a permutation repeats";
    for (const std::vector<int> &order : orders)
      EXPECT_TRUE(isPermutation(order, n));
  }
}

TEST(BenchOrders, MoreVariantsTakeEveryPositionEquallyOften) {
  for (int n = 4; n <= 9; ++n) {
    std::vector<std::vector<int>> orders = visitOrders(n);
    EXPECT_EQ(orders.size(), static_cast<size_t>(n % 2 ? 2 * n : n)) << n << " variants";
    for (const std::vector<int> &order : orders)
      ASSERT_TRUE(isPermutation(order, n)) << n << " variants";
    int per_position = static_cast<int>(orders.size()) / n;
    std::vector<std::vector<int>> counts = positionCounts(orders, n);
    for (int v = 0; v < n; ++v)
      for (int p = 0; p < n; ++p)
        EXPECT_EQ(counts[v][p], per_position)
            << n << " variants: variant " << v << " position " << p;
  }
}

TEST(BenchOrders, MoreVariantsFollowEveryOtherVariantEquallyOften) {
  // Williams' property: each ordered pair (a directly before b) occurs
  // equally often, so no variant always runs right after the same one.
  for (int n = 4; n <= 9; ++n) {
    std::vector<std::vector<int>> orders = visitOrders(n);
    std::vector<std::vector<int>> follows(n, std::vector<int>(n, 0));
    for (const std::vector<int> &order : orders)
      for (int i = 0; i + 1 < n; ++i)
        ++follows[order[i]][order[i + 1]];
    int expected = static_cast<int>(orders.size()) / n;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        if (a != b) {
          EXPECT_EQ(follows[a][b], expected) << n << " variants: " << a << " before " << b;
        }
  }
}

TEST(BenchOrders, NoVariantsIsAnError) {
  EXPECT_THROW(visitOrders(0), Error);
}

} // namespace
} // namespace lanejit::bench
