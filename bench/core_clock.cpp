// The core's clock from dependent additions (bench/core_clock.h).
#include "core_clock.h"

#include <algorithm>
#include <chrono>

namespace lanejit::bench {
namespace {

constexpr int64_t kAddsPerIteration = 100;

// `iterations` x 100 additions, each waiting for the one before (1 cycle
// latency); the loop counter's dec/jnz run beside them on other ports. A
// register operand, not an immediate: Golden Cove's renamer folds chains
// of add-immediate (measured: 23.7 "GHz" with $1, 3.99 GHz with a register).
__attribute__((noinline)) void dependentAdds(int64_t iterations) {
#if defined(__x86_64__)
  uint64_t value = 0, one = 1;
  asm volatile("1:\n"
               ".rept 100\n"
               "add %2, %0\n"
               ".endr\n"
               "dec %1\n"
               "jnz 1b\n"
               : "+r"(value), "+r"(iterations)
               : "r"(one)
               : "cc");
#else
  (void)iterations;
#endif
}

} // namespace

std::vector<ClockSample> measureCoreClock(int samples, int64_t cycles) {
  std::vector<ClockSample> out;
#if defined(__x86_64__)
  int64_t iterations = std::max<int64_t>(1, cycles / kAddsPerIteration);
  dependentAdds(iterations); // warm: the core leaves any idle state first
  for (int i = 0; i < samples; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    dependentAdds(iterations);
    auto t1 = std::chrono::steady_clock::now();
    out.push_back({iterations * kAddsPerIteration, std::chrono::duration<double>(t1 - t0).count()});
  }
#else
  (void)samples;
  (void)cycles;
#endif
  return out;
}

double clockHz(const std::vector<ClockSample> &samples) {
  double best = 0;
  for (const ClockSample &s : samples)
    if (s.seconds > 0)
      best = std::max(best, static_cast<double>(s.cycles) / s.seconds);
  return best;
}

} // namespace lanejit::bench
