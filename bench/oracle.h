// bench/oracle.h — the FP64 oracle of a case, computed once, and the check
// of every output of one visit against it: lanejit's at check::agrees (atol
// = rtol = 5e-5, check::kTolerance, plus one unit in the last place of a
// bf16 or f16 output: it computes in f32 and rounds once; an i8 output one
// step off the oracle's value as stored); a peer's the same, except a bf16
// or f16 output (not a quantizing program's: Q8_0's f16 scales are held to
// lanejit's rule) at the type's own tolerance (peerTolerance, peers/peer.h),
// since eager rounds every intermediate to the type and RoPE's and GELU +
// residual's differences of rounded products are off by units of the
// operands' last place, not of the result's.
#pragma once

#include <lanejit/check.h>
#include <lanejit/reference.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lanejit::bench {

struct OracleCheck {
  int64_t failures = 0;
  double max_abs_error = 0;  // over pairs where both are finite (so always finite)
  std::string first_failure; // "y[3,17]: got nan, want 1.25" or ""
};

class Oracle {
public:
  // Evaluates the case's program on its inputs in FP64 (slow; once per case).
  explicit Oracle(const check::Case &c);
  // Every element of every output; NaN matches only NaN, infinities must
  // be equal. `peer`: a peer's visit (its tolerance in 16-bit cases).
  OracleCheck compare(const check::Case &c, bool peer) const;

private:
  void compareI8(const check::Case &c, size_t output, OracleCheck &result) const;
  std::vector<ReferenceOutput> refs_;
  // Per i8 output (else empty): the oracle's values as stored (roundToI8).
  std::vector<std::vector<int8_t>> stored_;
};

} // namespace lanejit::bench
