// Timing a visit (bench/protocol.h).
#include "protocol.h"

#include "statistics.h"

#include <chrono>

namespace lanejit::bench {
namespace {

using Clock = std::chrono::steady_clock;

double timeReps(Repeatable &variant, int64_t reps) {
  auto start = Clock::now();
  variant.repeat(reps);
  return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

ProtocolSettings ProtocolSettings::seed() {
  return {"seed", 0.100, 0.030, int64_t{1} << 20, 7};
}

ProtocolSettings ProtocolSettings::quick() {
  // Short enough that the six cases with every peer take well under three
  // minutes on two shared cores; samples stay long next to the clock's cost.
  return {"quick", 0.010, 0.002, int64_t{1} << 20, 7};
}

VisitTiming timeVisit(Repeatable &variant, const ProtocolSettings &protocol) {
  auto start = Clock::now();
  do
    variant.repeat(1);
  while (std::chrono::duration<double>(Clock::now() - start).count() < protocol.warmup_s);

  VisitTiming timing;
  timing.reps = 1;
  while (timing.reps < protocol.max_reps && timeReps(variant, timing.reps) < protocol.target_s)
    timing.reps *= 2;
  for (int i = 0; i < protocol.samples; ++i)
    timing.samples_s.push_back(timeReps(variant, timing.reps));
  timing.value_s = median(timing.samples_s) / static_cast<double>(timing.reps);
  return timing;
}

} // namespace lanejit::bench
