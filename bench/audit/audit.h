// audit.h — `lanejit audit BUNDLE`: re-derives every claim of an evidence
// bundle (docs/bench-bundle.md) from its raw data and reports each one that
// does not hold.
//
// A separate code path from the benchmark: it shares none of bench/'s
// statistics, re-reads the raw samples and saved files, recomputes the FP64
// oracle with the library's reference evaluator, and hashes every file
// itself. What it checks and how to read its messages: docs/audit.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lanejit::audit {

struct AuditResult {
  // One line each, "<class>: <where>: <what>", e.g.
  // "wrong median: case 'ln-3x33' round 2 visit 1 (variant 'spec_on'): ...".
  std::vector<std::string> failures;
  // Facts worth knowing that do not fail the bundle (e.g. a recorded
  // binary has been rebuilt since).
  std::vector<std::string> notes;
  bool pass() const { return failures.empty(); }
};

// Never throws on a malformed bundle: a missing field, a wrong type, a
// non-number, an unreadable file are failures naming the case, round, visit
// and field.
AuditResult auditBundle(const std::filesystem::path &bundle_dir);

} // namespace lanejit::audit
