// bundle_model.h — bundle.json as plain structs, after read_bundle.cpp has
// checked every field's presence and type. A field that was missing or of
// the wrong type is an empty optional (its failure is already reported), so
// the checks skip what they cannot judge instead of guessing.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace lanejit::audit {

struct VisitChecks {
  std::optional<int64_t> oracle_failures;
  std::optional<double> oracle_max_abs_error;
  std::optional<bool> inputs_unchanged;
  std::optional<bool> guards_intact;
  std::optional<std::string> output_sha256;
  std::optional<bool> report_matches_claims; // lanejit variants only
  std::optional<bool> bits_match_default;    // lanejit variants only
};

struct Visit {
  std::string where; // "case 'x' round 2 visit 1 (variant 'a')", for messages
  std::string variant;
  std::optional<int64_t> reps;
  std::vector<double> samples_s;
  bool samples_valid = false; // every sample present, a finite number
  std::optional<double> value_s;
  VisitChecks checks;
  std::optional<std::string> status;
};

struct Round {
  std::string where; // "case 'x' round 2"
  std::vector<std::string> order;
  bool order_valid = false;
  std::vector<Visit> visits;
};

// A claim about the compile report: `observed RELATION value`.
struct Claim {
  std::string stat;
  std::string relation; // == != > >= < <=
  double value = 0, observed = 0;
};

struct InputFile {
  std::string name;
  std::string file;
};

struct Variant {
  std::string name;
  std::string kind; // "lanejit" or "peer"
  std::string options;
  std::vector<Claim> claims;
  std::string output_file; // the first output's
  // output_files as written: one per output of a program of several
  // (empty when absent: the one output is output_file).
  std::vector<InputFile> output_files;
};

struct Ratio {
  std::string where;
  std::string numerator, denominator;
  std::optional<double> median, min, max;
  std::optional<int64_t> wins, rounds;
};

// One stream's raw bandwidth samples; nullopt fields were unreadable.
struct Stream {
  std::optional<int64_t> bytes_per_pass, passes;
  std::vector<double> seconds;
  bool seconds_valid = false;
};

struct Roofline {
  std::optional<double> bytes, copy_bytes_per_s, triad_bytes_per_s, min_time_s, ratio;
  std::optional<Stream> copy, triad; // absent: the rates cannot be re-derived
};

struct Case {
  std::string where; // "case 'x'"
  std::string id, op;
  std::string dtype = "f32"; // as recorded; re-derived from the program's first input
  std::optional<int64_t> rows, cols;
  std::string program_file;
  std::vector<InputFile> inputs;
  std::vector<Variant> variants;
  bool variants_valid = false; // every variant well formed, names unique
  std::vector<Round> rounds;
  std::map<std::string, std::optional<double>> time_s;
  std::vector<Ratio> ratios;
  std::optional<Roofline> roofline;
  // summary.floor as written (null when absent); check_floor.cpp reads it.
  nlohmann::json floor;
  // summary.compile_ms: cold, warm, cached (milliseconds), when measured.
  std::map<std::string, std::optional<double>> compile_ms;
  // machine_code as written (null when absent); check_machine_code.cpp reads it.
  nlohmann::json machine_code;
};

struct Protocol {
  std::optional<std::string> name;
  std::optional<int64_t> samples, max_reps;
  std::optional<double> warmup_s, target_s, atol, rtol;
};

struct Bundle {
  std::string status;
  Protocol protocol;
  nlohmann::json environment;
  std::vector<Case> cases;
  std::map<std::string, std::string> files; // path -> sha256
};

} // namespace lanejit::audit
