// checks.h — the audit's steps, one line each; audit.cpp runs them in order.
// Each step reports into Findings and never throws on bad bundle content.
#pragma once

#include "bundle_model.h"
#include "findings.h"

#include <lanejit/ir.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit::audit {

// read_bundle.cpp: bundle.json -> Bundle, reporting every missing or
// mistyped field; every JSON number in the file must be finite. nullopt when
// bundle.json is unreadable, not JSON, or not of format "lanejit-bench/1".
std::optional<Bundle> readBundle(const std::filesystem::path &dir, Findings &findings);

// rounds.cpp: each round visits every variant exactly once, in its `order`;
// across rounds every variant takes every position equally often, and with
// three or fewer variants every permutation appears exactly once.
void checkRounds(const Case &c, Findings &findings);

// check_statistics.cpp: value_s = median(samples_s) / reps for every visit;
// time_s, ratios and the roofline re-derived from the per-round values.
void checkStatistics(const Case &c, const Protocol &protocol, Findings &findings);

// status.cpp: every check true and every status "ok" when the bundle says
// "pass"; a "fail" bundle fails.
void checkStatus(const Bundle &bundle, Findings &findings);

// files.cpp: `files` lists exactly the bundle's files (bundle.json aside),
// each with its SHA-256; every path the cases name is listed and stays
// inside the bundle. Binaries in `environment` are compared where present
// (a rebuilt binary is a note, not a failure).
void checkFiles(const Bundle &bundle, const std::filesystem::path &dir, Findings &findings);

// The protocol's oracle tolerance, atol = rtol (|y - ref| <= atol +
// rtol*|ref|). The audit keeps its own copy of the definition on purpose:
// it re-checks lanejit's claims and must not inherit a change to them.
constexpr double kOracleTolerance = 5e-5;

// check_outputs.cpp: the program parses, inputs match its declarations and the
// case's shape, saved outputs have the right shape and the recorded hashes,
// and pass the FP64 oracle at atol = rtol = 5e-5 as recorded.
// Returns the parsed program (for checkClaims), or nullopt.
std::optional<Program> checkCaseData(const Case &c, const std::filesystem::path &dir,
                                     Findings &findings);

// check_claims.cpp: each lanejit variant's claims hold as recorded, agree with
// report_matches_claims, and their `observed` values are what compiling the
// saved program (nullptr: it did not parse) with the variant's options for
// the recorded CPU gives.
void checkClaims(const Case &c, const Program *program, const std::string &cpu_features,
                 Findings &findings);

// check_machine_code.cpp: every machine_code record is what lanejit inspect
// reads now from the object it names in the bundle (code bytes,
// instructions, stack frame, widest vector, calls, innermost loops).
void checkMachineCode(const Case &c, const std::filesystem::path &dir, Findings &findings);

// check_floor.cpp: the floor re-derived from its raw numbers: the memory
// part from the stream samples, the per-call counts from the stepped calls,
// the clock from its samples, the larger part, its name and the ratio.
void checkFloor(const Case &c, Findings &findings);

// report_md.cpp: report.md's numbers for each case equal the summary's at
// the precision shown.
void checkReport(const Bundle &bundle, const std::filesystem::path &dir, Findings &findings);

// Helpers shared by the steps above (check_statistics.cpp, files.cpp).
double median(std::vector<double> values); // mean of the middle two when even
bool relativelyClose(double recorded, double derived, double tolerance);
std::string sha256Hex(std::string_view bytes);
// The file's bytes, or nullopt when it cannot be read.
std::optional<std::string> readFileBytes(const std::filesystem::path &path);
// A relative path inside the bundle: no "..", not absolute, not empty.
bool isBundlePath(const std::string &path);

} // namespace lanejit::audit
