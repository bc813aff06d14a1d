// Rounds: each round visits every variant once, in the order it records,
// and the recorded orders are balanced (docs/bench-bundle.md, first rules).
#include "checks.h"

#include <map>
#include <set>

namespace lanejit::audit {
namespace {

std::string list(const std::vector<std::string> &names) {
  std::string text = "[";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + names[i];
  return text + "]";
}

std::vector<std::string> variantNames(const Case &c) {
  std::vector<std::string> names;
  for (const Variant &v : c.variants)
    names.push_back(v.name);
  return names;
}

// True when `order` holds each of `names` exactly once.
bool isPermutation(const std::vector<std::string> &order, const std::vector<std::string> &names) {
  std::multiset<std::string> a(order.begin(), order.end()), b(names.begin(), names.end());
  return a == b;
}

void checkVisitsOfRound(const Case &c, const Round &round, Findings &findings) {
  std::map<std::string, int> count;
  std::vector<std::string> visited;
  for (const Visit &visit : round.visits) {
    ++count[visit.variant];
    visited.push_back(visit.variant);
  }
  std::vector<std::string> names = variantNames(c);
  std::set<std::string> known(names.begin(), names.end());
  for (const auto &[name, n] : count)
    if (!known.count(name))
      findings.fail(kind::kMalformed, round.where,
                    "a visit names variant '" + name + "', which the case does not declare");
  for (const std::string &name : names) {
    if (count[name] == 0)
      findings.fail(kind::kMissingVisit, round.where, "variant '" + name + "' has no visit");
    if (count[name] > 1)
      findings.fail(kind::kDuplicatedVisit, round.where,
                    "variant '" + name + "' is visited " + std::to_string(count[name]) + " times");
  }
  if (!round.order_valid)
    return;
  if (!isPermutation(round.order, names))
    findings.fail(kind::kWrongOrder, round.where,
                  "order " + list(round.order) + " is not a permutation of the variants " +
                      list(names));
  else if (visited != round.order)
    findings.fail(kind::kWrongOrder, round.where,
                  "order says " + list(round.order) + " but the visits ran " + list(visited));
}

int64_t factorial(int64_t n) {
  return n <= 1 ? 1 : n * factorial(n - 1);
}

void checkBalance(const Case &c, Findings &findings) {
  std::vector<std::string> names = variantNames(c);
  const int64_t n = static_cast<int64_t>(names.size());
  const int64_t rounds = static_cast<int64_t>(c.rounds.size());
  for (const Round &round : c.rounds)
    if (!round.order_valid || !isPermutation(round.order, names))
      return; // already reported; balance is meaningless
  std::map<std::string, std::vector<int64_t>> positions;
  for (const std::string &name : names)
    positions[name].assign(n, 0);
  for (const Round &round : c.rounds)
    for (int64_t p = 0; p < n; ++p)
      ++positions[round.order[p]][p];
  if (rounds % n != 0)
    findings.fail(kind::kWrongOrder, c.where,
                  std::to_string(rounds) + " rounds cannot put each of " + std::to_string(n) +
                      " variants in every position equally often");
  else
    for (const std::string &name : names)
      for (int64_t p = 0; p < n; ++p)
        if (positions[name][p] != rounds / n)
          findings.fail(kind::kWrongOrder, c.where,
                        "variant '" + name + "' takes position " + std::to_string(p) + " in " +
                            std::to_string(positions[name][p]) + " of " + std::to_string(rounds) +
                            " rounds; balanced orders need " + std::to_string(rounds / n));
  if (n > 3)
    return;
  std::map<std::vector<std::string>, int> seen;
  for (const Round &round : c.rounds)
    ++seen[round.order];
  for (const auto &[order, times] : seen)
    if (times > 1)
      findings.fail(kind::kWrongOrder, c.where,
                    "order " + list(order) + " appears in " + std::to_string(times) +
                        " rounds; with three or fewer variants each order appears once");
  if (static_cast<int64_t>(seen.size()) != factorial(n))
    findings.fail(kind::kWrongOrder, c.where,
                  "the rounds cover " + std::to_string(seen.size()) + " of the " +
                      std::to_string(factorial(n)) + " orders of " + list(names));
}

} // namespace

void checkRounds(const Case &c, Findings &findings) {
  if (!c.variants_valid)
    return;
  for (const Round &round : c.rounds)
    checkVisitsOfRound(c, round, findings);
  checkBalance(c, findings);
}

} // namespace lanejit::audit
