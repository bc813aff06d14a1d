// The audit's order of steps. Reading comes first; every later step judges
// only the fields that were read cleanly, so one bad field yields one
// failure, not a cascade of confused ones.
#include "audit.h"

#include "checks.h"

#include <exception>
#include <sstream>

namespace lanejit::audit {
namespace {

// The oracle check is defined at atol = rtol = kOracleTolerance; a bundle
// claiming another tolerance claims another check than the format's.
void checkProtocol(const Protocol &protocol, Findings &findings) {
  for (auto [name, value] : {std::pair{"atol", protocol.atol}, std::pair{"rtol", protocol.rtol}})
    if (value && *value != kOracleTolerance) {
      std::ostringstream why;
      why << name << " is " << *value << "; the oracle check is defined at " << kOracleTolerance;
      findings.fail(kind::kWrongOracle, "protocol", why.str());
    }
  if (protocol.samples && *protocol.samples < 1)
    findings.fail(kind::kMalformed, "protocol", "samples must be at least 1");
  // A named protocol is exactly its settings (the seed's values for "seed", docs/bench.md).
  struct Named {
    const char *name;
    double warmup_s, target_s;
    int64_t samples;
  };
  for (const Named &n : {Named{"seed", 0.100, 0.030, 7}, Named{"quick", 0.010, 0.002, 7}})
    if (protocol.name && *protocol.name == n.name &&
        (protocol.warmup_s != n.warmup_s || protocol.target_s != n.target_s ||
         protocol.samples != n.samples))
      findings.fail(kind::kMalformed, "protocol",
                    std::string("protocol '") + n.name + "' must be warmup " +
                        std::to_string(n.warmup_s) + " s, target " + std::to_string(n.target_s) +
                        " s, " + std::to_string(n.samples) + " samples");
}

// docs/bench-bundle.md: each lanejit variant has a ratio against every
// variant listed after it.
void checkRatioList(const Case &c, Findings &findings) {
  for (size_t i = 0; i < c.variants.size(); ++i) {
    if (c.variants[i].kind != "lanejit")
      continue;
    for (size_t j = i + 1; j < c.variants.size(); ++j) {
      bool found = false;
      for (const Ratio &r : c.ratios)
        found = found || (r.numerator == c.variants[i].name && r.denominator == c.variants[j].name);
      if (!found)
        findings.fail(kind::kWrongRatio, c.where + " summary",
                      "no ratio " + c.variants[i].name + "/" + c.variants[j].name);
    }
  }
}

std::string cpuFeatures(const Bundle &bundle) {
  auto it = bundle.environment.find("cpu_features");
  return it != bundle.environment.end() && it->is_string() ? it->get<std::string>() : "";
}

} // namespace

AuditResult auditBundle(const std::filesystem::path &bundle_dir) {
  AuditResult result;
  Findings findings(result);
  try {
    std::optional<Bundle> bundle = readBundle(bundle_dir, findings);
    if (!bundle)
      return result;
    checkProtocol(bundle->protocol, findings);
    checkFiles(*bundle, bundle_dir, findings);
    for (const Case &c : bundle->cases) {
      checkRounds(c, findings);
      checkStatistics(c, bundle->protocol, findings);
      if (c.variants_valid)
        checkRatioList(c, findings);
      std::optional<Program> program = checkCaseData(c, bundle_dir, findings);
      checkClaims(c, program ? &*program : nullptr, cpuFeatures(*bundle), findings);
      checkMachineCode(c, bundle_dir, findings);
      checkFloor(c, findings);
    }
    checkStatus(*bundle, findings);
    checkReport(*bundle, bundle_dir, findings);
  } catch (const std::exception &e) {
    // A bug of the audit's own must not pass a bundle: report it as failing.
    findings.fail(kind::kMalformed, bundle_dir.string(),
                  std::string("the audit stopped: ") + e.what());
  }
  return result;
}

} // namespace lanejit::audit
