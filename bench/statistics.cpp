// Medians and paired ratios (bench/statistics.h).
#include "statistics.h"

#include <lanejit/error.h>

#include <algorithm>
#include <string>
#include <vector>

namespace lanejit::bench {

double median(std::span<const double> values) {
  if (values.empty())
    throw Error(Error::Kind::Bind, "median of no values");
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

RatioSummary pairedRatios(std::span<const double> numerator, std::span<const double> denominator) {
  if (numerator.size() != denominator.size() || numerator.empty())
    throw Error(Error::Kind::Bind, "paired ratios need equal, non-empty round counts (got " +
                                       std::to_string(numerator.size()) + " and " +
                                       std::to_string(denominator.size()) + ")");
  std::vector<double> ratios;
  RatioSummary summary;
  for (size_t i = 0; i < numerator.size(); ++i) {
    ratios.push_back(numerator[i] / denominator[i]);
    summary.wins += ratios.back() < 1.0;
  }
  summary.median = median(ratios);
  auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  summary.min = *lo;
  summary.max = *hi;
  summary.rounds = static_cast<int>(ratios.size());
  return summary;
}

} // namespace lanejit::bench
