#include "support/covering_array.h"

#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>

namespace lanejit::test {
namespace {

// Every choice of `strength` factor indices, in lexicographic order.
std::vector<std::vector<int>> factorSets(int factors, int strength) {
  std::vector<std::vector<int>> sets;
  std::vector<int> set(strength);
  auto extend = [&](auto &&self, int depth, int from) -> void {
    if (depth == strength) {
      sets.push_back(set);
      return;
    }
    for (int f = from; f < factors; ++f) {
      set[depth] = f;
      self(self, depth + 1, f + 1);
    }
  };
  extend(extend, 0, 0);
  return sets;
}

// The levels a row gives the factors of `set`, as one mixed-radix number.
int levelCode(const std::vector<int> &levels, const std::vector<int> &set, const CoveringRow &row) {
  int code = 0;
  for (int f : set)
    code = code * levels[f] + row[f];
  return code;
}

int codeCount(const std::vector<int> &levels, const std::vector<int> &set) {
  int n = 1;
  for (int f : set)
    n *= levels[f];
  return n;
}

} // namespace

std::vector<CoveringRow> coveringArray(const std::vector<int> &levels, int strength,
                                       const std::vector<CoveringRow> &required) {
  const int factors = static_cast<int>(levels.size());
  if (strength < 1 || strength > factors)
    throw std::invalid_argument("coveringArray: strength outside 1..factors");
  const std::vector<std::vector<int>> sets = factorSets(factors, strength);
  // uncovered[s][code]: combination `code` of factor set s not yet in a row.
  std::vector<std::vector<bool>> uncovered;
  int64_t remaining = 0;
  for (const auto &set : sets) {
    uncovered.emplace_back(codeCount(levels, set), true);
    remaining += codeCount(levels, set);
  }
  std::vector<CoveringRow> rows;
  auto newlyCovered = [&](const CoveringRow &row) {
    int n = 0;
    for (size_t s = 0; s < sets.size(); ++s)
      n += uncovered[s][levelCode(levels, sets[s], row)];
    return n;
  };
  auto add = [&](const CoveringRow &row) {
    for (size_t s = 0; s < sets.size(); ++s) {
      const int code = levelCode(levels, sets[s], row);
      remaining -= uncovered[s][code] ? 1 : 0;
      uncovered[s][code] = false;
    }
    rows.push_back(row);
  };
  for (const CoveringRow &row : required)
    add(row);

  // Greedy: each new row must cover the first combination still missing;
  // of a fixed number of random completions, the one covering most wins.
  std::mt19937 random(20261201);
  constexpr int kCandidates = 64;
  while (remaining > 0) {
    size_t s = 0;
    int code = 0;
    for (s = 0; s < sets.size(); ++s) {
      code = 0;
      while (code < int(uncovered[s].size()) && !uncovered[s][code])
        ++code;
      if (code < int(uncovered[s].size()))
        break;
    }
    CoveringRow best;
    int bestGain = -1;
    for (int k = 0; k < kCandidates; ++k) {
      CoveringRow row(factors);
      for (int f = 0; f < factors; ++f)
        row[f] = static_cast<int>(random() % static_cast<unsigned>(levels[f]));
      int rest = code; // decode `code` back into the set's levels
      for (int i = strength - 1; i >= 0; --i) {
        int f = sets[s][i];
        row[f] = rest % levels[f];
        rest /= levels[f];
      }
      int gain = newlyCovered(row);
      if (gain > bestGain) {
        bestGain = gain;
        best = row;
      }
    }
    add(best);
  }
  return rows;
}

bool coversAllInteractions(const std::vector<int> &levels, int strength,
                           const std::vector<CoveringRow> &rows, std::string *missed) {
  // Plain enumeration: every factor set, every tuple of its levels, looked
  // for row by row.
  for (const std::vector<int> &set : factorSets(static_cast<int>(levels.size()), strength)) {
    std::vector<int> want(set.size(), 0);
    for (;;) {
      bool found = false;
      for (const CoveringRow &row : rows) {
        bool match = true;
        for (size_t i = 0; i < set.size() && match; ++i)
          match = row[set[i]] == want[i];
        if (match) {
          found = true;
          break;
        }
      }
      if (!found) {
        if (missed) {
          std::ostringstream s;
          for (size_t i = 0; i < set.size(); ++i)
            s << (i ? ", " : "") << "factor " << set[i] << " = " << want[i];
          *missed = s.str();
        }
        return false;
      }
      size_t i = 0; // next tuple, last factor fastest
      for (i = set.size(); i-- > 0;) {
        if (++want[i] < levels[set[i]])
          break;
        want[i] = 0;
      }
      if (i == size_t(-1))
        break;
    }
  }
  return true;
}

} // namespace lanejit::test
