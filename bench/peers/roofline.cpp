// The roofline: the bytes a case must move per call, and single-thread
// copy/triad bandwidth measured now at the case's footprint (so a footprint
// that fits a large L3 is measured as such, as the kernels see it).
// Compiled -O3 -march=native -fno-tree-loop-distribute-patterns: the copy
// stays a load/store loop like the kernels', not a memcpy call with its own
// non-temporal-store strategy.
#include "peers/peer_factories.h"

#include <lanejit/error.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>

namespace lanejit::bench {

int64_t bytesMoved(const std::string &op, int64_t rows, int64_t cols, int64_t element_bytes) {
  if (rows < 0 || cols < 0 || element_bytes <= 0)
    throw Error(Error::Kind::Bind, "bytesMoved: negative shape or element size");
  const int64_t f = element_bytes, rc = rows * cols;
  if (op == "rope") // x, cos + sin (half width each), y
    return (rc + rc + rc) * f;
  if (op == "layernorm") // x, y, gamma, beta
    return (2 * rc + 2 * cols) * f;
  if (op == "rmsnorm") // x, y, gamma
    return (2 * rc + cols) * f;
  if (op == "rmsnorm_q8") // x, gamma; q (int8), scale (f32 per row)
    return (rc + cols) * f + rc + 4 * rows;
  if (op == "quantize_q8") // x; q, scale
    return rc * f + rc + 4 * rows;
  if (op == "rmsnorm_q8_0") // x, gamma; q (int8), scale (f16 per 32 columns)
    return (rc + cols) * f + rc + 2 * (rc / 32);
  if (op == "quantize_q8_0") // x; q, scale
    return rc * f + rc + 2 * (rc / 32);
  if (op == "swiglu" || op == "gelu_residual") // x, u, y
    return 3 * rc * f;
  if (op == "masked_softmax") {
    if (cols == 0)
      return 0;
    // Only the valid scores (c <= r mod C) must be read: the floor must stay
    // a floor for a kernel that skips the masked ones. y is written whole.
    int64_t cycles = rows / cols, rest = rows % cols;
    int64_t valid = cycles * (cols * (cols + 1) / 2) + rest * (rest + 1) / 2;
    return (valid + rc) * f;
  }
  throw Error(Error::Kind::Bind, "bytesMoved: unknown operator '" + op + "'");
}

namespace {

using Clock = std::chrono::steady_clock;

struct FreeDeleter {
  void operator()(float *p) const { std::free(p); }
};
using Array = std::unique_ptr<float[], FreeDeleter>;

Array allocateTouched(int64_t n, float value) {
  size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  Array a(static_cast<float *>(std::aligned_alloc(64, bytes)));
  if (!a)
    throw Error(Error::Kind::Bind,
                "measureBandwidth: cannot allocate " + std::to_string(bytes) + " bytes");
  std::fill(a.get(), a.get() + n, value);
  return a;
}

// Keeps the compiler from merging or dropping repeated passes.
inline void clobber(float *p) {
  asm volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) void copyPass(float *__restrict a, const float *__restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    a[i] = b[i];
}

__attribute__((noinline)) void triadPass(float *__restrict a, const float *__restrict b,
                                         const float *__restrict c, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    a[i] = b[i] + s * c[i];
}

// bestStreamRate (peer.h), with the pass inlined: >= 200 us per sample
// keeps the clock's cost negligible.
template <typename Pass>
double bestRate(Pass pass, int64_t bytes_per_pass, double budget, StreamSamples &out) {
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  Clock::time_point start = Clock::now();
  int64_t passes = 1;
  double best = 0;
  out = StreamSamples{bytes_per_pass, 0, {}};
  for (int samples = 0;; ++samples) {
    Clock::time_point t0 = Clock::now();
    for (int64_t i = 0; i < passes; ++i)
      pass();
    Clock::time_point t1 = Clock::now();
    double s = seconds(t0, t1);
    if (s < 200e-6 && passes < (int64_t{1} << 30)) {
      // Too short, even after counted samples (a later one can run
      // faster): calibrate again; the samples so far, and their best, no
      // longer count, so the best rate is always that of out's samples.
      passes *= 2;
      samples = -1;
      out.seconds.clear();
      best = 0;
      continue;
    }
    out.passes = passes;
    out.seconds.push_back(s);
    best = std::max(best, static_cast<double>(bytes_per_pass) * passes / s);
    if (samples >= 2 && seconds(start, t1) >= budget)
      return best;
  }
}

} // namespace

double bestStreamRate(const std::function<void()> &pass, int64_t bytes_per_pass, double budget,
                      StreamSamples &out) {
  return bestRate(pass, bytes_per_pass, budget, out);
}

Bandwidth measureBandwidth(int64_t footprint_bytes, double seconds_budget) {
  if (footprint_bytes <= 0 || !(seconds_budget > 0) || !std::isfinite(seconds_budget))
    throw Error(Error::Kind::Bind, "measureBandwidth: footprint and budget must be positive");
  const int64_t f = sizeof(float);
  int64_t n_copy = std::max<int64_t>(16, footprint_bytes / (2 * f));  // a, b
  int64_t n_triad = std::max<int64_t>(16, footprint_bytes / (3 * f)); // a, b, c
  Array a = allocateTouched(n_copy, 0.0f), b = allocateTouched(n_copy, 1.0f);
  Array c = allocateTouched(n_triad, 2.0f);
  float *pa = a.get(), *pb = b.get(), *pc = c.get();

  Bandwidth bw;
  bw.copy_bytes_per_s = bestRate(
      [&] {
        copyPass(pa, pb, n_copy);
        clobber(pa);
      },
      2 * n_copy * f, seconds_budget / 2, bw.copy);
  bw.triad_bytes_per_s = bestRate(
      [&] {
        triadPass(pa, pb, pc, 0.5f, n_triad);
        clobber(pa);
      },
      3 * n_triad * f, seconds_budget / 2, bw.triad);
  return bw;
}

} // namespace lanejit::bench
