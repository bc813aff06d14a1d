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

bool allFusionOff(const CompileOptions &o) {
  return !o.fuse_pointwise && !o.fuse_reductions && !o.fuse_outputs;
}

// One row per claim; add rows here when a switch gains a visible effect.
// Each claim names a CompileReport number (CompileReport::number) and holds
// for any program: what a switch guarantees, not what a program happens to
// produce.
const ClaimRule kRules[] = {
    // A packet is the W the variant asked for.
    {[](const ClaimContext &) { return true; },
     [](const ClaimContext &c) {
       return Claim{"lanes", "==", c.lanes};
     }},
    // Specialization off: every packet runs the masked body.
    {[](const ClaimContext &c) { return !c.options.specialize_full_packets; },
     [](const ClaimContext &) {
       return Claim{"specialized_bodies", "==", 0};
     }},
    // Specialization on and at least one full packet: a dense body exists.
    {[](const ClaimContext &c) { return c.options.specialize_full_packets && c.cols >= c.lanes; },
     [](const ClaimContext &) {
       return Claim{"specialized_bodies", ">", 0};
     }},
    // Pointwise and reduction fusion on, materialize-or-recompute off: no
    // intermediate goes to memory (that pass may store a re-read value).
    {[](const ClaimContext &c) {
       return c.options.fuse_pointwise && c.options.fuse_reductions &&
              !c.options.materialize_or_recompute;
     },
     [](const ClaimContext &) {
       return Claim{"materialized_buffers", "==", 0};
     }},
    // Every fusion off: no traversal computes two things in one pass.
    {[](const ClaimContext &c) { return allFusionOff(c.options); },
     [](const ClaimContext &) {
       return Claim{"fused_regions", "==", 0};
     }},
    {[](const ClaimContext &c) { return !c.options.bound_masked_columns; },
     [](const ClaimContext &) {
       return Claim{"bounded_traversals", "==", 0};
     }},
    {[](const ClaimContext &c) { return !c.options.hoist_guards; },
     [](const ClaimContext &) {
       return Claim{"guards_hoisted", "==", 0};
     }},
    {[](const ClaimContext &c) {
       return c.options.inline_packet_bodies == CompileOptions::Inline::Never;
     },
     [](const ClaimContext &) {
       return Claim{"inlined_bodies", "==", 0};
     }},
    {[](const ClaimContext &c) {
       return c.options.inline_packet_bodies == CompileOptions::Inline::Always;
     },
     [](const ClaimContext &) {
       return Claim{"helper_functions", "==", 0};
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

int64_t statValue(const CompileReport &report, const std::string &stat) {
  if (std::optional<int64_t> v = report.number(stat))
    return *v;
  throw Error(Error::Kind::Bind, "unknown compile-report number '" + stat + "'");
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

std::vector<CheckedClaim> checkClaims(const std::vector<Claim> &claims,
                                      const CompileReport &report) {
  std::vector<CheckedClaim> checked;
  for (const Claim &claim : claims) {
    int64_t observed = statValue(report, claim.stat);
    checked.push_back({claim, observed, relationHolds(observed, claim.relation, claim.value)});
  }
  return checked;
}

bool allHold(const std::vector<CheckedClaim> &claims) {
  return std::all_of(claims.begin(), claims.end(), [](const CheckedClaim &c) { return c.holds; });
}

} // namespace lanejit::bench
