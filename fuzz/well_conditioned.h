// fuzz/well_conditioned.h — which output elements of an arbitrary program
// an f32 kernel can fairly be held to check::kTolerance against the FP64
// oracle.
//
// The library's programs are well conditioned, so tests compare every
// element. A fuzzed program need not be: (x + 1e8) - 1e8, exp(100) * 0, a
// sum that cancels, a comparison of two nearly equal values. There the f32
// kernel and the f64 oracle differ by far more than 5e-5 without any bug.
// So the oracle is also run on copies of the program whose every f32 value
// is multiplied by 1 +- 2^-20 (16 f32 ulps; the sign uniform, or
// alternating by column and node), which models the per-operation rounding
// of f32 evaluation to first order. An element is compared only where every
// copy agrees with the oracle to a quarter of the tolerance, in the same
// class (finite, the same infinity, NaN), and only in rows whose f32
// intermediates stay within [1e-30, 1e36] in magnitude (no f32 overflow or
// underflow the oracle would not see).
#pragma once

#include <lanejit/check.h>
#include <lanejit/reference.h>

#include <cstdint>
#include <vector>

namespace lanejit::fuzz {

struct ReferenceCheck {
  std::vector<ReferenceOutput> reference; // the oracle on the unchanged program
  // Per output, per dense element [r * cols + c]: compare it or not.
  std::vector<std::vector<uint8_t>> comparable;
  int64_t compared = 0;
  int64_t skipped = 0;
};

ReferenceCheck wellConditionedElements(const check::Case &c);

} // namespace lanejit::fuzz
