// findings.h — how the audit's checks report: one line per failure, its
// class first so a reader (and the mutation tests) can tell the kinds apart.
#pragma once

#include "audit.h"

#include <string>
#include <string_view>

namespace lanejit::audit {

// The failure classes (docs/audit.md explains each).
namespace kind {
inline constexpr std::string_view kMalformed = "malformed";
inline constexpr std::string_view kNotANumber = "not a number";
inline constexpr std::string_view kMissingVisit = "missing visit";
inline constexpr std::string_view kDuplicatedVisit = "duplicated visit";
inline constexpr std::string_view kWrongOrder = "wrong order";
inline constexpr std::string_view kWrongMedian = "wrong median";
inline constexpr std::string_view kWrongSummary = "wrong summary";
inline constexpr std::string_view kWrongRatio = "wrong ratio";
inline constexpr std::string_view kWrongRoofline = "wrong roofline";
inline constexpr std::string_view kWrongFloor = "wrong floor";
inline constexpr std::string_view kWrongReport = "wrong report";
inline constexpr std::string_view kFailedGuard = "failed guard";
inline constexpr std::string_view kFailedCheck = "failed check";
inline constexpr std::string_view kWrongOracle = "wrong oracle";
inline constexpr std::string_view kFailedStatus = "failed status";
inline constexpr std::string_view kAlteredOutput = "altered output";
inline constexpr std::string_view kAlteredFileHash = "altered file hash";
inline constexpr std::string_view kMissingFile = "missing file";
inline constexpr std::string_view kUnlistedFile = "unlisted file";
inline constexpr std::string_view kWrongShape = "wrong shape";
inline constexpr std::string_view kBadProgram = "bad program";
inline constexpr std::string_view kWrongMachineCode = "wrong machine code";
} // namespace kind

class Findings {
public:
  explicit Findings(AuditResult &result) : result_(result) {}
  void fail(std::string_view kind, const std::string &where, const std::string &what) {
    result_.failures.push_back(std::string(kind) + ": " + where + ": " + what);
  }
  void note(const std::string &what) { result_.notes.push_back(what); }
  size_t failureCount() const { return result_.failures.size(); }

private:
  AuditResult &result_;
};

} // namespace lanejit::audit
