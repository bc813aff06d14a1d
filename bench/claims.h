// bench/claims.h — what a lanejit variant claims about its compiled code,
// checked against the compile report (Kernel::report()) on every visit.
//
// The claims come from a small table of rules (claims.cpp): each rule says
// when it applies to a variant and what it claims. A new switch (fusion,
// say) adds a row there.
#pragma once

#include <lanejit/kernel.h>
#include <lanejit/options.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lanejit::bench {

struct Claim {
  std::string stat;     // a CompileReport::number name: lanes, specialized_bodies, ...
  std::string relation; // ==, !=, >, >=, <, <=
  int64_t value = 0;
};

struct CheckedClaim {
  Claim claim;
  int64_t observed = 0;
  bool holds = false;
};

// What a variant compiled with `options` claims at `cols` columns; `lanes`
// is the W it asked for (the widest the target has when options.lanes = 0).
std::vector<Claim> claimsFor(const CompileOptions &options, int64_t cols, int lanes);

// Throws Error(Kind::Bind) for an unknown stat or relation.
int64_t statValue(const CompileReport &report, const std::string &stat);
bool relationHolds(int64_t observed, const std::string &relation, int64_t value);
std::vector<CheckedClaim> checkClaims(const std::vector<Claim> &claims,
                                      const CompileReport &report);
bool allHold(const std::vector<CheckedClaim> &claims);

} // namespace lanejit::bench
