// A case's summary from its rounds (bench/case_runner.h), and the pass/fail
// queries of bench/records.h.
#include "case_runner.h"
#include "statistics.h"

#include <cmath>

namespace lanejit::bench {
namespace {

// value_s of `variant` in every round (NaN when the round lacks it).
std::vector<double> valuesOf(const CaseRecord &record, const std::string &variant) {
  std::vector<double> values;
  for (const RoundRecord &round : record.rounds) {
    double value = std::nan("");
    for (const VisitRecord &visit : round.visits)
      if (visit.variant == variant)
        value = visit.timing.value_s;
    values.push_back(value);
  }
  return values;
}

} // namespace

void summarize(CaseRecord &record) {
  record.time_s.clear();
  record.ratios.clear();
  for (const VariantRecord &v : record.variants) {
    std::vector<double> finite;
    for (double value : valuesOf(record, v.name))
      if (std::isfinite(value) && value > 0)
        finite.push_back(value);
    if (!finite.empty())
      record.time_s.emplace_back(v.name, median(finite));
  }
  for (size_t i = 0; i < record.variants.size(); ++i) {
    const VariantRecord &num = record.variants[i];
    if (num.kind != "lanejit")
      continue;
    std::vector<double> a = valuesOf(record, num.name);
    for (size_t j = i + 1; j < record.variants.size(); ++j) {
      std::vector<double> b = valuesOf(record, record.variants[j].name), pa, pb;
      for (size_t r = 0; r < a.size(); ++r) {
        if (std::isfinite(a[r]) && std::isfinite(b[r]) && b[r] > 0) {
          pa.push_back(a[r]);
          pb.push_back(b[r]);
        }
      }
      if (!pa.empty())
        record.ratios.push_back({num.name, record.variants[j].name, pairedRatios(pa, pb)});
    }
  }
}

int CaseRecord::failedVisits() const {
  int failed = 0;
  for (const RoundRecord &round : rounds)
    for (const VisitRecord &visit : round.visits)
      failed += !visit.ok();
  return failed;
}

bool BenchRecord::passed() const {
  for (const CaseRecord &c : cases)
    if (c.failedVisits() > 0)
      return false;
  return !cases.empty();
}

} // namespace lanejit::bench
