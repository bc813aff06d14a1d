// Status: a bundle passes only if every visit's checks are true and every
// visit says "ok"; a bundle that says "fail" is reported failing. Each false
// check is its own failure, whatever the bundle claims, so a reader sees
// exactly which visit went wrong.
#include "checks.h"

namespace lanejit::audit {
namespace {

bool holds(const Claim &claim) {
  const std::string &r = claim.relation;
  double a = claim.observed, b = claim.value;
  return r == "=="   ? a == b
         : r == "!=" ? a != b
         : r == ">"  ? a > b
         : r == ">=" ? a >= b
         : r == "<"  ? a < b
                     : a <= b;
}

std::string text(const Claim &claim) {
  auto n = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.')
      s.pop_back();
    return s;
  };
  return claim.stat + " " + claim.relation + " " + n(claim.value) + " (observed " +
         n(claim.observed) + ")";
}

// A lanejit variant's claims about its compile report must hold, and each
// visit's report_matches_claims must say so.
void checkClaims(const Case &c, Findings &findings) {
  for (const Variant &v : c.variants) {
    bool all_hold = true;
    for (const Claim &claim : v.claims)
      if (!holds(claim)) {
        all_hold = false;
        findings.fail(kind::kFailedCheck, c.where + " variant '" + v.name + "'",
                      "claim " + text(claim) + " does not hold");
      }
    for (const Round &round : c.rounds)
      for (const Visit &visit : round.visits)
        if (visit.variant == v.name && v.kind == "lanejit" &&
            visit.checks.report_matches_claims == true && !all_hold)
          findings.fail(kind::kFailedCheck, visit.where,
                        "report_matches_claims is true but a claim does not hold");
  }
}

void checkVisit(const Visit &visit, Findings &findings) {
  const VisitChecks &checks = visit.checks;
  if (checks.guards_intact == false)
    findings.fail(kind::kFailedGuard, visit.where, "guards_intact is false");
  if (checks.inputs_unchanged == false)
    findings.fail(kind::kFailedCheck, visit.where, "inputs_unchanged is false");
  if (checks.report_matches_claims == false)
    findings.fail(kind::kFailedCheck, visit.where, "report_matches_claims is false");
  if (checks.oracle_failures && *checks.oracle_failures != 0)
    findings.fail(kind::kFailedCheck, visit.where,
                  "oracle_failures is " + std::to_string(*checks.oracle_failures));
  if (visit.status && *visit.status != "ok")
    findings.fail(kind::kFailedStatus, visit.where, "status is '" + *visit.status + "'");
}

} // namespace

void checkStatus(const Bundle &bundle, Findings &findings) {
  if (bundle.status == "fail")
    findings.fail(kind::kFailedStatus, "bundle.json", "the bundle's status is 'fail'");
  else if (bundle.status != "pass" && !bundle.status.empty())
    findings.fail(kind::kMalformed, "bundle.json",
                  "status is '" + bundle.status + "', neither 'pass' nor 'fail'");
  for (const Case &c : bundle.cases) {
    checkClaims(c, findings);
    for (const Round &round : c.rounds)
      for (const Visit &visit : round.visits)
        checkVisit(visit, findings);
  }
}

} // namespace lanejit::audit
