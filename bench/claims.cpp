// The claims table (bench/claims.h).
#include "claims.h"

#include <lanejit/error.h>

#include <algorithm>

namespace lanejit::bench {
namespace {

struct ClaimContext {
  const CompileOptions &options;
  int64_t cols;
  int lanes;
};

struct ClaimRule {
  bool (*applies)(const ClaimContext &);
  Claim (*claim)(const ClaimContext &);
};

// One row per claim; add rows here when a switch gains a visible effect.
const ClaimRule kRules[] = {
    // A packet is the W the variant asked for.
    {[](const ClaimContext &) { return true; },
     [](const ClaimContext &c) {
       return Claim{"lanes", "==", c.lanes};
     }},
    // Specialization off: every packet runs the masked body.
    {[](const ClaimContext &c) { return !c.options.specialize_full_packets; },
     [](const ClaimContext &) {
       return Claim{"dense_bodies", "==", 0};
     }},
    // Specialization on and at least one full packet: a dense body exists.
    {[](const ClaimContext &c) { return c.options.specialize_full_packets && c.cols >= c.lanes; },
     [](const ClaimContext &) {
       return Claim{"dense_bodies", ">", 0};
     }},
};

} // namespace

std::vector<Claim> claimsFor(const CompileOptions &options, int64_t cols, int lanes) {
  ClaimContext context{options, cols, lanes};
  std::vector<Claim> claims;
  for (const ClaimRule &rule : kRules)
    if (rule.applies(context))
      claims.push_back(rule.claim(context));
  return claims;
}

int64_t statValue(const CompileStats &stats, const std::string &stat) {
  if (stat == "lanes")
    return stats.lanes;
  if (stat == "accumulators")
    return stats.accumulators;
  if (stat == "traversals")
    return stats.traversals;
  if (stat == "reductions")
    return stats.reductions;
  if (stat == "dense_bodies")
    return stats.dense_bodies;
  if (stat == "masked_bodies")
    return stats.masked_bodies;
  throw Error(Error::Kind::Bind, "unknown compile-report stat '" + stat + "'");
}

bool relationHolds(int64_t observed, const std::string &relation, int64_t value) {
  if (relation == "==")
    return observed == value;
  if (relation == "!=")
    return observed != value;
  if (relation == ">")
    return observed > value;
  if (relation == ">=")
    return observed >= value;
  if (relation == "<")
    return observed < value;
  if (relation == "<=")
    return observed <= value;
  throw Error(Error::Kind::Bind, "unknown claim relation '" + relation + "'");
}

std::vector<CheckedClaim> checkClaims(const std::vector<Claim> &claims, const CompileStats &stats) {
  std::vector<CheckedClaim> checked;
  for (const Claim &claim : claims) {
    int64_t observed = statValue(stats, claim.stat);
    checked.push_back({claim, observed, relationHolds(observed, claim.relation, claim.value)});
  }
  return checked;
}

bool allHold(const std::vector<CheckedClaim> &claims) {
  return std::all_of(claims.begin(), claims.end(), [](const CheckedClaim &c) { return c.holds; });
}

} // namespace lanejit::bench
