// bench/records.h — what a bench run records: the data behind bundle.json
// (docs/bench-bundle.md), the report and the chart.
#pragma once

#include "claims.h"
#include "core_clock.h"
#include "protocol.h"
#include "statistics.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lanejit::bench {

struct VisitChecks {
  int64_t oracle_failures = 0;
  double oracle_max_abs_error = 0;
  std::string first_failure;
  bool inputs_unchanged = true;
  bool guards_intact = true;
  std::string output_sha256;
  bool output_stable = true;                 // same hash as this variant's earlier visits
  std::optional<bool> report_matches_claims; // lanejit variants only
  // lanejit variants only: no switch may change an output bit, so every
  // lanejit variant's output equals the first (default) variant's.
  std::optional<bool> bits_match_default;
};

struct VisitRecord {
  std::string variant;
  VisitTiming timing;
  VisitChecks checks;
  std::string status = "ok"; // or "failed: <reasons>"
  bool ok() const { return status == "ok"; }
};

struct RoundRecord {
  std::vector<std::string> order;
  std::vector<VisitRecord> visits; // in visit order
};

struct OutputFileRecord {
  std::string name, file;
};

struct VariantRecord {
  std::string name;
  std::string kind; // "lanejit" or "peer"
  std::string description;
  std::string options;   // CompileOptions::key(), lanejit only
  double compile_ms = 0; // lanejit only
  std::vector<CheckedClaim> claims;
  std::string output_file; // relative to the bundle; the first output's
  // A program of several outputs: every output's file, in its order (empty
  // for one output).
  std::vector<OutputFileRecord> output_files;
};

struct RatioRecord {
  std::string numerator, denominator;
  RatioSummary summary;
};

struct StreamRecord {
  int64_t bytes_per_pass = 0, passes = 0;
  std::vector<double> seconds; // each sample: `passes` passes
};

struct RooflineRecord {
  int64_t bytes = 0;
  double copy_bytes_per_s = 0, triad_bytes_per_s = 0; // best sample of each stream
  double min_time_s = 0;                              // bytes / max(copy, triad)
  double ratio = 0;                                   // time of the first variant / min_time_s
  StreamRecord copy, triad; // the raw samples, so the audit re-derives the rates
};

// One single-stepped call of the default entry: rows [0, rows) with
// args.cols = cols (bench/instruction_count.h).
struct SteppedCallRecord {
  int64_t cols = 0, rows = 0;
  int64_t instructions = 0, vector = 0;
};

// The floor's compute part (bench/floor.h): executed vector instructions
// per call over the issue width, at the clock measured in this run.
struct ComputeFloorRecord {
  std::string unavailable; // why there is no compute part; "" when there is
  // How the stepped calls give one call of the case: "whole call", "rows",
  // "columns" or "rows and columns" (docs/bench.md, "The floor").
  std::string method;
  int64_t row_group = 1; // rows per step of the per-row count (W across lanes)
  // The call the stepped calls extrapolate to: the case's R x C, or 1 x RC
  // for a kernel that runs a dense call's rows as one row (flatten_rows).
  int64_t target_rows = 0, target_cols = 0;
  std::vector<SteppedCallRecord> stepped;
  double instructions = 0, vector = 0; // per call of the case, derived
  int issue_width = 0;
  std::string issue_width_source;
  std::vector<ClockSample> clock; // dependent-add samples
  double clock_hz = 0;            // the fastest sample's
  double seconds = 0;             // vector / issue_width / clock_hz
};

// The per-case floor: max(memory part, compute part), both measured in this
// run on this machine, and lanejit's time over it.
struct FloorRecord {
  std::string memory_unavailable; // "" when the memory part is measured
  int64_t bytes = 0;
  double copy_bytes_per_s = 0, triad_bytes_per_s = 0;
  StreamRecord copy, triad;
  double memory_s = 0; // bytes / max(copy, triad)
  ComputeFloorRecord compute;
  double floor_s = 0;
  std::string bound; // "memory" or "compute": the larger part
  double ratio = 0;  // time of the first variant / floor_s
  double cost_s = 0; // what measuring the floor took (bandwidth, steps, clock)
};

// Milliseconds to compile the case's default kernel, each in a fresh process
// (bench/compile_times.h).
struct CompileTimesRecord {
  double cold_ms = 0;            // empty persistent cache: LLVM starts and runs
  double warm_ms = 0;            // a second kernel in that process
  double cached_ms = 0;          // a new process, from the persistent cache
  bool cached_from_disk = false; // the cached run did hit the cache
};

// One function of a kernel's machine code as `lanejit inspect` reads it
// (include/lanejit/inspect.h), for the report's side-by-side reading.
struct CodeRecord {
  std::string variant;  // whose code: "lanejit", "inductor", ...
  std::string file;     // the object, relative to the bundle
  std::string function; // its symbol
  int64_t bytes = 0;
  int instructions = 0;
  int64_t stack_frame = -1; // bytes; -1 unknown
  int vector_bits = 0;      // widest vector memory operand
  std::vector<std::string> calls;          // call targets in order ("indirect" if unnamed)
  std::vector<int> innermost_instructions; // each innermost loop's instruction count
};

struct InputRecord {
  std::string name, file;
};

struct CaseRecord {
  std::string id, op; // op: the library name, or "" for a user program
  std::string dtype = "f32"; // its inputs' element type: f32, bf16 or f16
  int64_t rows = 0, cols = 0;
  std::string program_file;
  std::vector<InputRecord> inputs;
  std::vector<VariantRecord> variants;
  std::vector<RoundRecord> rounds;
  // summary
  std::vector<std::pair<std::string, double>> time_s; // in variant order
  std::vector<RatioRecord> ratios;
  std::optional<RooflineRecord> roofline;
  std::optional<FloorRecord> floor;
  std::optional<CompileTimesRecord> compile_times;
  // When a peer names its code: the lanejit kernel's and the peer's,
  // function by function (objects/<case>/lanejit.o and the peer's files).
  std::vector<CodeRecord> machine_code;

  int failedVisits() const;
};

struct EnvironmentRecord {
  std::string cpu_model, cpu_features;
  int cores = 0;
  std::array<double, 3> load_before{}, load_after{};
  std::string llvm_version, git_commit, compile_options;
  bool git_dirty = false;
  std::string aten_cpu_capability; // empty unless set
  struct Binary {
    std::string path, sha256;
  };
  std::vector<Binary> binaries; // this executable, then peer modules loaded at run time
};

struct BenchRecord {
  ProtocolSettings protocol;
  EnvironmentRecord environment;
  std::vector<CaseRecord> cases;
  bool passed() const;
};

} // namespace lanejit::bench
