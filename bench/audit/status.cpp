// Status: a bundle passes only if every visit's checks are true and every
// visit says "ok"; a bundle that says "fail" is reported failing. Each false
// check is its own failure, whatever the bundle claims, so a reader sees
// exactly which visit went wrong.
#include "checks.h"

namespace lanejit::audit {
namespace {

void checkVisit(const Visit &visit, Findings &findings) {
  const VisitChecks &checks = visit.checks;
  if (checks.guards_intact == false)
    findings.fail(kind::kFailedGuard, visit.where, "guards_intact is false");
  if (checks.inputs_unchanged == false)
    findings.fail(kind::kFailedCheck, visit.where, "inputs_unchanged is false");
  if (checks.bits_match_default == false)
    findings.fail(kind::kFailedCheck, visit.where, "bits_match_default is false");
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
  for (const Case &c : bundle.cases)
    for (const Round &round : c.rounds)
      for (const Visit &visit : round.visits)
        checkVisit(visit, findings);
}

} // namespace lanejit::audit
