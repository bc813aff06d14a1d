// Statistics, written here from scratch rather than shared with the bench:
// each visit's value from its raw samples, then time_s, the paired ratios
// and the roofline from those values. Recorded numbers must agree to 1e-9
// relative (the format's tolerance; JSON round-trips doubles exactly).
#include "checks.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <tuple>

namespace lanejit::audit {
namespace {

constexpr double kTolerance = 1e-9;

std::string num(double value) {
  std::ostringstream out;
  out.precision(10);
  out << value;
  return out.str();
}

// The visit's time per call derived from its raw samples, when they are valid.
std::optional<double> derivedValue(const Visit &visit) {
  if (!visit.samples_valid || !visit.reps || *visit.reps < 1)
    return std::nullopt;
  return median(visit.samples_s) / static_cast<double>(*visit.reps);
}

void checkVisit(const Visit &visit, const Protocol &protocol, Findings &findings) {
  if (visit.reps && *visit.reps < 1)
    findings.fail(kind::kMalformed, visit.where, "reps is " + std::to_string(*visit.reps));
  if (visit.reps && protocol.max_reps && *visit.reps > *protocol.max_reps)
    findings.fail(kind::kMalformed, visit.where,
                  "reps " + std::to_string(*visit.reps) + " exceeds the protocol's max_reps " +
                      std::to_string(*protocol.max_reps));
  if (protocol.samples && visit.samples_valid &&
      static_cast<int64_t>(visit.samples_s.size()) != *protocol.samples)
    findings.fail(kind::kMalformed, visit.where,
                  std::to_string(visit.samples_s.size()) + " samples, the protocol says " +
                      std::to_string(*protocol.samples));
  for (size_t i = 0; visit.samples_valid && i < visit.samples_s.size(); ++i)
    if (visit.samples_s[i] <= 0)
      findings.fail(kind::kMalformed, visit.where,
                    "samples_s[" + std::to_string(i) + "] = " + num(visit.samples_s[i]) +
                        " is not a positive time");
  std::optional<double> derived = derivedValue(visit);
  if (derived && visit.value_s && !relativelyClose(*visit.value_s, *derived, kTolerance))
    findings.fail(kind::kWrongMedian, visit.where,
                  "value_s is " + num(*visit.value_s) +
                      " but median(samples_s)/reps = " + num(*derived));
}

// Per variant, the derived value of each round (nullopt where unknown).
using RoundValues = std::map<std::string, std::vector<std::optional<double>>>;

RoundValues roundValues(const Case &c) {
  RoundValues values;
  for (const Variant &v : c.variants)
    values[v.name].assign(c.rounds.size(), std::nullopt);
  for (size_t r = 0; r < c.rounds.size(); ++r) {
    std::map<std::string, int> count;
    for (const Visit &visit : c.rounds[r].visits)
      ++count[visit.variant];
    for (const Visit &visit : c.rounds[r].visits)
      if (values.count(visit.variant) && count[visit.variant] == 1)
        values[visit.variant][r] = derivedValue(visit);
  }
  return values;
}

// All rounds' values, or nullopt when any is unknown (already reported).
std::optional<std::vector<double>> complete(const std::vector<std::optional<double>> &values) {
  std::vector<double> out;
  for (const auto &v : values) {
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

void checkTimes(const Case &c, const RoundValues &values, Findings &findings) {
  const std::string where = c.where + " summary";
  for (const auto &[name, recorded] : c.time_s)
    if (!values.count(name))
      findings.fail(kind::kWrongSummary, where,
                    "time_s names '" + name + "', which the case does not declare");
  for (const auto &[name, per_round] : values) {
    auto it = c.time_s.find(name);
    if (it == c.time_s.end()) {
      findings.fail(kind::kWrongSummary, where, "time_s has no entry for '" + name + "'");
      continue;
    }
    auto all = complete(per_round);
    if (!it->second || !all || all->empty())
      continue;
    double derived = median(*all);
    if (!relativelyClose(*it->second, derived, kTolerance))
      findings.fail(kind::kWrongSummary, where,
                    "time_s." + name + " is " + num(*it->second) +
                        " but the median over rounds of value_s is " + num(derived));
  }
}

void checkRatio(const Ratio &ratio, const RoundValues &values, Findings &findings) {
  auto num_it = values.find(ratio.numerator), den_it = values.find(ratio.denominator);
  if (num_it == values.end() || den_it == values.end()) {
    findings.fail(kind::kWrongRatio, ratio.where, "names a variant the case does not declare");
    return;
  }
  auto a = complete(num_it->second), b = complete(den_it->second);
  if (!a || !b || a->empty())
    return;
  std::vector<double> per_round;
  int64_t wins = 0;
  for (size_t r = 0; r < a->size(); ++r) {
    per_round.push_back((*a)[r] / (*b)[r]);
    wins += per_round.back() < 1 ? 1 : 0;
  }
  auto expect = [&](const std::optional<double> &recorded, double derived, const char *field) {
    if (recorded && !relativelyClose(*recorded, derived, kTolerance))
      findings.fail(kind::kWrongRatio, ratio.where,
                    std::string(field) + " is " + num(*recorded) +
                        " but the per-round ratios give " + num(derived));
  };
  expect(ratio.median, median(per_round), "median");
  expect(ratio.min, *std::min_element(per_round.begin(), per_round.end()), "min");
  expect(ratio.max, *std::max_element(per_round.begin(), per_round.end()), "max");
  if (ratio.wins && *ratio.wins != wins)
    findings.fail(kind::kWrongRatio, ratio.where,
                  "wins is " + std::to_string(*ratio.wins) + " but " + std::to_string(wins) +
                      " rounds have a ratio below 1");
  if (ratio.rounds && *ratio.rounds != static_cast<int64_t>(per_round.size()))
    findings.fail(kind::kWrongRatio, ratio.where,
                  "rounds is " + std::to_string(*ratio.rounds) + " but the case has " +
                      std::to_string(per_round.size()));
}

void checkRoofline(const Case &c, const RoundValues &values, Findings &findings) {
  const Roofline &roof = *c.roofline;
  const std::string where = c.where + " summary roofline";
  if (!roof.bytes || !roof.copy_bytes_per_s || !roof.triad_bytes_per_s || !roof.min_time_s)
    return;
  if (*roof.bytes <= 0 || *roof.copy_bytes_per_s <= 0 || *roof.triad_bytes_per_s <= 0) {
    findings.fail(kind::kWrongRoofline, where,
                  "bytes, copy_bytes_per_s and triad_bytes_per_s must be positive");
    return;
  }
  // Each rate is the best of its raw samples, and each stream moved about
  // the case's own bytes per pass (the footprint the floor is about).
  for (auto [name, stream, rate] : {std::tuple{"copy", &roof.copy, *roof.copy_bytes_per_s},
                                    std::tuple{"triad", &roof.triad, *roof.triad_bytes_per_s}}) {
    const std::optional<Stream> &s = *stream;
    if (!s || !s->bytes_per_pass || !s->passes || !s->seconds_valid || *s->passes < 1)
      continue; // unreadable: already a failure from reading
    double best = 0;
    for (double t : s->seconds)
      best = std::max(best, static_cast<double>(*s->bytes_per_pass) * *s->passes / t);
    if (!relativelyClose(rate, best, kTolerance))
      findings.fail(kind::kWrongRoofline, where,
                    std::string(name) + "_bytes_per_s is " + num(rate) +
                        " but its best sample gives " + num(best));
    if (std::abs(static_cast<double>(*s->bytes_per_pass) - *roof.bytes) > 64)
      findings.fail(kind::kWrongRoofline, where,
                    std::string(name) + " moved " + std::to_string(*s->bytes_per_pass) +
                        " bytes per pass, not the case's " + num(*roof.bytes));
  }
  // The floor is the bytes at the faster of the two measured streams.
  double best = *roof.copy_bytes_per_s > *roof.triad_bytes_per_s ? *roof.copy_bytes_per_s
                                                                 : *roof.triad_bytes_per_s;
  double min_time = *roof.bytes / best;
  if (!relativelyClose(*roof.min_time_s, min_time, kTolerance))
    findings.fail(kind::kWrongRoofline, where,
                  "min_time_s is " + num(*roof.min_time_s) +
                      " but bytes / max(copy, triad bytes per s) = " + num(min_time));
  auto first = std::find_if(c.variants.begin(), c.variants.end(),
                            [](const Variant &v) { return v.kind == "lanejit"; });
  if (first == c.variants.end()) {
    findings.fail(kind::kWrongRoofline, where, "the case has no lanejit variant to compare");
    return;
  }
  auto all = complete(values.at(first->name));
  if (!roof.ratio || !all || all->empty())
    return;
  double ratio = median(*all) / min_time;
  if (!relativelyClose(*roof.ratio, ratio, kTolerance))
    findings.fail(kind::kWrongRoofline, where,
                  "ratio is " + num(*roof.ratio) + " but time_s." + first->name +
                      " / min_time_s = " + num(ratio));
}

} // namespace

double median(std::vector<double> values) {
  if (values.empty())
    return std::nan("");
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  if (values.size() % 2 == 1)
    return values[mid];
  return (values[mid - 1] + values[mid]) / 2;
}

bool relativelyClose(double recorded, double derived, double tolerance) {
  if (recorded == derived)
    return true;
  return std::fabs(recorded - derived) <= tolerance * std::fabs(derived);
}

void checkStatistics(const Case &c, const Protocol &protocol, Findings &findings) {
  for (const Round &round : c.rounds)
    for (const Visit &visit : round.visits)
      checkVisit(visit, protocol, findings);
  if (!c.variants_valid)
    return;
  RoundValues values = roundValues(c);
  checkTimes(c, values, findings);
  for (const Ratio &ratio : c.ratios)
    checkRatio(ratio, values, findings);
  if (c.roofline)
    checkRoofline(c, values, findings);
}

} // namespace lanejit::audit
