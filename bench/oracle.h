// bench/oracle.h — the FP64 oracle of a case, computed once, and the check
// of one visit's outputs against it (atol = rtol = 5e-5, check::kTolerance).
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
  // Every element of every output; NaN matches only NaN, infinities must be equal.
  OracleCheck compare(const check::Case &c) const;

private:
  std::vector<ReferenceOutput> refs_;
};

} // namespace lanejit::bench
