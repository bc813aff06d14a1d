// bench/core_clock.h — the core's clock rate, measured now: chains of
// dependent integer additions (one cycle each on every x86-64 core this
// bench knows) timed with the steady clock. No performance counters needed.
#pragma once

#include <cstdint>
#include <vector>

namespace lanejit::bench {

struct ClockSample {
  int64_t cycles = 0; // dependent additions executed
  double seconds = 0;
};

// `samples` timings of `cycles` dependent additions each (about 2.7 ms at
// 3.7 GHz for the default: long enough that the steady clock's ~7 us steps
// on this project's VMs move the rate by 0.3%, not 3%). x86-64 only;
// elsewhere empty.
std::vector<ClockSample> measureCoreClock(int samples = 7, int64_t cycles = 10'000'000);

// The fastest sample's cycles / seconds: interruptions only slow a sample
// down, so the fastest is the clock the core ran at. 0 when there are none.
double clockHz(const std::vector<ClockSample> &samples);

} // namespace lanejit::bench
