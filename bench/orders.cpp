// Visit orders (bench/orders.h).
#include "orders.h"

#include <lanejit/error.h>

#include <algorithm>
#include <numeric>
#include <string>

namespace lanejit::bench {
namespace {

std::vector<std::vector<int>> allPermutations(int n) {
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::vector<int>> orders;
  do
    orders.push_back(order);
  while (std::next_permutation(order.begin(), order.end()));
  return orders;
}

// Williams' construction: the first row is 0, 1, n-1, 2, n-2, ...; row r adds
// r to every entry (mod n). For odd n the mirrored rows are added, which
// balances the carry-over (who precedes whom).
std::vector<std::vector<int>> williams(int n) {
  std::vector<int> first(n, 0);
  for (int k = 1; k < n; ++k)
    first[k] = k % 2 == 1 ? (k + 1) / 2 : n - k / 2;
  std::vector<std::vector<int>> orders;
  for (int r = 0; r < n; ++r) {
    std::vector<int> row;
    for (int v : first)
      row.push_back((v + r) % n);
    orders.push_back(row);
  }
  if (n % 2 == 1) {
    for (int r = 0; r < n; ++r)
      orders.emplace_back(orders[r].rbegin(), orders[r].rend());
  }
  return orders;
}

} // namespace

std::vector<std::vector<int>> visitOrders(int variants) {
  if (variants < 1)
    throw Error(Error::Kind::Bind,
                "visit orders need at least one variant, got " + std::to_string(variants));
  if (variants <= 3)
    return allPermutations(variants);
  return williams(variants);
}

} // namespace lanejit::bench
