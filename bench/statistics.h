// bench/statistics.h — the protocol's statistics: medians, and paired
// per-round ratios summarised by their median, range and win count.
//
// The range is the spread of the per-round ratios, not a confidence
// interval; the median ratio is not the ratio of the median times.
#pragma once

#include <span>

namespace lanejit::bench {

// The middle value; for an even count, the mean of the two middle values.
// Throws Error(Kind::Bind) on an empty span.
double median(std::span<const double> values);

struct RatioSummary {
  double median = 0, min = 0, max = 0;
  int wins = 0;   // rounds where numerator < denominator (ratio < 1)
  int rounds = 0; // paired rounds
};

// Ratios numerator[i] / denominator[i] of the same round i, summarised.
// Throws Error(Kind::Bind) when the spans differ in length or are empty.
RatioSummary pairedRatios(std::span<const double> numerator, std::span<const double> denominator);

} // namespace lanejit::bench
