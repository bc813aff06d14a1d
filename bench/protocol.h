// bench/protocol.h — how one visit times one variant.
//
// A visit: call the variant for `warmup_s`; double the repetitions until one
// sample of `reps` back-to-back calls lasts at least `target_s` (or reps
// reaches `max_reps`); then take `samples` samples. The visit's value is the
// median sample divided by reps: seconds per call. Loops of calls, because
// reading the clock costs ~30 ns and a call through a pointer ~2 ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanejit::bench {

struct ProtocolSettings {
  std::string name = "seed"; // "quick", "seed" or "custom"
  double warmup_s = 0.100;
  double target_s = 0.030;
  int64_t max_reps = int64_t{1} << 20;
  int samples = 7;

  static ProtocolSettings seed();  // the seed's values, exactly
  static ProtocolSettings quick(); // the main job: the default run in well under 3 minutes
};

// One variant, bound to its buffers: `reps` back-to-back calls. The loop
// lives in the implementation so the per-call overhead is the call itself.
class Repeatable {
public:
  virtual ~Repeatable() = default;
  virtual void repeat(int64_t reps) = 0;
  // After the timed repetitions, before the visit's checks (not timed).
  virtual void finish() {}
  // Memory the variant owns (a kernel's workspace) still has its guard
  // zones; checked with the case's buffers on every visit.
  virtual bool guardsIntact() const { return true; }
};

struct VisitTiming {
  int64_t reps = 0;
  std::vector<double> samples_s; // seconds for `reps` calls each
  double value_s = 0;            // median(samples_s) / reps
};

VisitTiming timeVisit(Repeatable &variant, const ProtocolSettings &protocol);

} // namespace lanejit::bench
