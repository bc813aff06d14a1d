// bench/orders.h — the visit orders of a case's rounds.
//
// No variant may always run first (cold) or last: with three or fewer
// variants the rounds are every permutation; with more, a Williams design
// (a balanced Latin square: n rounds for even n, 2n for odd n) in which every
// variant takes every position equally often and follows every other
// variant equally often.
#pragma once

#include <vector>

namespace lanejit::bench {

// One order per round; each order is a permutation of 0 .. variants-1.
// Throws Error(Kind::Bind) when variants < 1.
std::vector<std::vector<int>> visitOrders(int variants);

} // namespace lanejit::bench
