// Claims about a lanejit variant's compile report ("dense_bodies > 0"): each
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

// CompileOptions::key() read back: "lanes=16;spec=1;opt=2;features=...;off=a,b,".
std::optional<CompileOptions> parseKey(const std::string &key) {
  CompileOptions options;
  std::map<std::string, std::string> fields;
  std::stringstream in(key);
  std::string part;
  while (std::getline(in, part, ';')) {
    size_t eq = part.find('=');
    if (eq == std::string::npos)
      return std::nullopt;
    fields[part.substr(0, eq)] = part.substr(eq + 1);
  }
  try {
    options.lanes = std::stoi(fields.at("lanes"));
    options.specialize_full_packets = fields.at("spec") == "1";
    options.opt_level = std::stoi(fields.at("opt"));
    options.target_features = fields.at("features");
    std::stringstream passes(fields.at("off"));
    while (std::getline(passes, part, ','))
      if (!part.empty())
        options.disabled_passes.push_back(part);
  } catch (const std::exception &) {
    return std::nullopt;
  }
  if (options.key() != key) // a key carries nothing else
    return std::nullopt;
  return options;
}

std::optional<int> statOf(const CompileStats &stats, const std::string &name) {
  if (name == "lanes")
    return stats.lanes;
  if (name == "accumulators")
    return stats.accumulators;
  if (name == "traversals")
    return stats.traversals;
  if (name == "reductions")
    return stats.reductions;
  if (name == "dense_bodies")
    return stats.dense_bodies;
  if (name == "masked_bodies")
    return stats.masked_bodies;
  return std::nullopt;
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
  // "features=" empty meant the host of the run: compile for the CPU the
  // bundle recorded, not for whatever machine audits it.
  if (options->target_features.empty())
    options->target_features = cpu_features;
  CompileStats stats;
  try {
    stats = compile(program, *options).stats();
  } catch (const std::exception &e) {
    findings.fail(kind::kFailedCheck, where,
                  std::string("the saved program does not compile with its options: ") + e.what());
    return;
  }
  for (const Claim &claim : v.claims) {
    std::optional<int> actual = statOf(stats, claim.stat);
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
