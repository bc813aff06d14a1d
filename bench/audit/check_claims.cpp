// Claims about a lanejit variant's compile report ("specialized_bodies > 0"): each
// must hold as recorded, report_matches_claims must agree, and the recorded
// `observed` values must be what compiling the saved program with the
// variant's options gives — so a claim cannot be made true by editing it.
#include "checks.h"

#include <lanejit/kernel.h>

#include <map>
#include <sstream>

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

std::string num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string text(const Claim &claim) {
  return claim.stat + " " + claim.relation + " " + num(claim.value) + " (observed " +
         num(claim.observed) + ")";
}

// The variant's options, read back with the library's own inverse of
// CompileOptions::key().
std::optional<CompileOptions> parseKey(const std::string &key) {
  try {
    return CompileOptions::fromKey(key);
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

// The audit's own list of what a variant's options oblige it to claim, so
// dropping an inconvenient claim from a bundle is caught (independent of
// the bench's claims table). Names say what the options must be.
void checkRequiredClaims(const Variant &v, const CompileOptions &o, const std::string &where,
                         Findings &findings) {
  auto require = [&](const char *stat, const char *relation, double value) {
    for (const Claim &c : v.claims)
      if (c.stat == stat && c.relation == relation && c.value == value)
        return;
    findings.fail(kind::kFailedCheck, where,
                  std::string("its options oblige the claim ") + stat + " " + relation + " " +
                      num(value) + ", which is missing");
  };
  bool fusionOff = !o.fuse_pointwise && !o.fuse_reductions && !o.fuse_outputs;
  if (!o.specialize_full_packets)
    require("specialized_bodies", "==", 0);
  if (o.fuse_pointwise && o.fuse_reductions && !o.materialize_or_recompute)
    require("materialized_buffers", "==", 0);
  if (fusionOff)
    require("fused_regions", "==", 0);
  if (v.name.find("nospec") != std::string::npos && o.specialize_full_packets)
    findings.fail(kind::kFailedCheck, where, "named nospec, but its options specialize");
  if (v.name.find("unfused") != std::string::npos && !fusionOff)
    findings.fail(kind::kFailedCheck, where, "named unfused, but its options fuse");
  bool lanes = false;
  for (const Claim &c : v.claims)
    lanes = lanes || c.stat == "lanes";
  if (!lanes)
    findings.fail(kind::kFailedCheck, where, "no claim on lanes");
}

void recompile(const Case &c, const Variant &v, const Program &program,
               const std::string &cpu_features, Findings &findings) {
  const std::string where = c.where + " variant '" + v.name + "'";
  std::optional<CompileOptions> options = parseKey(v.options);
  if (!options) {
    findings.fail(kind::kMalformed, where,
                  "options '" + v.options + "' is not a CompileOptions key");
    return;
  }
  checkRequiredClaims(v, *options, where, findings);
  // No cpu and "features=" empty meant the host of the run: compile for the
  // CPU the bundle recorded, not for whatever machine audits it. A named cpu
  // is the same target anywhere.
  if (options->target_cpu.empty() && options->target_features.empty())
    options->target_features = cpu_features;
  CompileReport report;
  try {
    report = compile(program, *options).report();
  } catch (const std::exception &e) {
    findings.fail(kind::kFailedCheck, where,
                  std::string("the saved program does not compile with its options: ") + e.what());
    return;
  }
  for (const Claim &claim : v.claims) {
    std::optional<int64_t> actual = report.number(claim.stat);
    if (!actual)
      findings.fail(kind::kMalformed, where, "claim names no compile-report stat: " + claim.stat);
    else if (*actual != claim.observed)
      findings.fail(kind::kFailedCheck, where,
                    "claim " + text(claim) + ": compiling the saved program with '" + v.options +
                        "' gives " + claim.stat + " = " + std::to_string(*actual));
  }
}

} // namespace

void checkClaims(const Case &c, const Program *program, const std::string &cpu_features,
                 Findings &findings) {
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
    if (program && v.kind == "lanejit")
      recompile(c, v, *program, cpu_features, findings);
  }
}

} // namespace lanejit::audit
