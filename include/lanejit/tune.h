// lanejit/tune.h — the autotuner: measure, on this machine and for one
// shape, configurations that by construction give the same output bits
// (lanes W, packet-local or rows across lanes, the entry specialised for C
// or the generic one), keep the fastest, and record the choice in the
// persistent cache folder so later processes use it without measuring.
//
//   TuneResult r = tune(library::rmsNorm(), TuneShape::parse("4096x64"));
//   std::cout << r.text();   // candidates, medians, the choice, time spent
//
// A kernel's calls with that C then run the chosen configuration's entry
// (read from the record when the kernel first needs an entry for that C;
// with CompileOptions::tune_on_first_call, measured there when there is no
// record). Tuning cannot change a result: every candidate computes every
// element with the same operations in the same order (docs/architecture.md,
// "Tuner").
#pragma once

#include <lanejit/ir.h>
#include <lanejit/kernel.h>
#include <lanejit/options.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lanejit {

struct TuneShape {
  int64_t rows = 0, cols = 0;
  // "RxC" (or "RXC"), both at least 1; throws Error(Kind::Bind) naming the
  // text otherwise.
  static TuneShape parse(const std::string &text);
  std::string str() const; // "RxC"
};

// One configuration. Every one gives the same bits.
struct TuneCandidate {
  int lanes = 0;                   // W: 4, 8 or 16
  bool rows_across_lanes = false;  // one row per lane; else packet-local
  bool specialize_columns = false; // packet-local: the entry compiled for this C
  std::string name() const;        // "W8 rows-across-lanes", "W16 packet-local C-entry", ...
  bool operator==(const TuneCandidate &) const = default;
};

struct TuneSettings {
  // Wall time for compiling and measuring. When it runs out, what was
  // compiled is measured once more and the fastest of those is chosen (at
  // least the untuned configuration is always compiled and measured).
  double budget_ms = 1500;
  int threads = 1;   // threads per call while measuring, 1-256
  bool store = true; // write the record (when the persistent cache is on)
};

struct TuneResult {
  std::string program; // its name
  TuneShape shape;
  int threads = 1;
  struct Measured {
    TuneCandidate candidate;
    double median_ns = 0; // per call; 0: not measured (budget spent first)
    int samples = 0;
    bool untuned = false; // what the kernel runs without a record
  };
  std::vector<Measured> measured; // tuneCandidates() order
  size_t chosen = 0;              // index into measured
  double budget_ms = 0, spent_ms = 0;
  std::string record_path;        // where the choice was stored; "" if not
  std::vector<std::string> notes; // e.g. why it was not stored
  std::string text() const;       // a table for people
};

// The configurations tune() measures for `shape`: W in {4, 8, 16} up to
// the target's widest (only options.lanes when it is set), rows across
// lanes when C is within the code-size limit and options.rows_across_lanes
// is on, packet-local with the C entry (options.specialize_columns on and
// C <= 1024) and without. The untuned configuration is first.
std::vector<TuneCandidate> tuneCandidates(const Program &program, TuneShape shape,
                                          const CompileOptions &options);

// Measures the candidates on synthetic inputs of `shape` (paired,
// interleaved rounds; each candidate's median), checks that each wrote the
// untuned kernel's bits, and records the fastest. Throws Error on a bad
// program, options or shape (e.g. an odd C for RoPE).
TuneResult tune(const Program &program, TuneShape shape,
                const CompileOptions &options = CompileOptions::fromEnvironment(),
                const TuneSettings &settings = {});

// The record for (program, options, this target and lanejit build, shape):
// `applies` when a kernel would use it; `message` says what was found,
// including why a record was ignored (written for another target or by
// another lanejit build). A record covers C exactly and every R with the
// same power of two at or above it (4000 and 4096 rows share one).
struct TunedRecord {
  bool found = false, applies = false;
  TuneCandidate choice;
  TuneShape measured; // the shape it was measured at
  double median_ns = 0, untuned_ns = 0;
  std::string path, message;
};
TunedRecord findTuned(const Program &program, TuneShape shape, const CompileOptions &options);

// A kernel whose every call runs `candidate` (tests and callers that pin a
// configuration); the same bits as compile(program, options).
Kernel compileCandidate(const Program &program, const CompileOptions &options,
                        const TuneCandidate &candidate);

// The report's estimated instructions per row of each mapping at `cols`
// (as CompileReport::Mapping::costs, for any C).
CompileReport::MappingCost estimateMappingCost(const Kernel &kernel, int64_t cols);

} // namespace lanejit
