// bench/demo.h — the main job: every library operator at the seed's shapes,
// compiled, checked against the FP64 oracle and timed against plain C++.
//
// For each case: compile time; one Kernel::run checked element by element
// (plus inputs unchanged and guard zones intact); the native entry and the
// naive loop (itself checked) timed in interleaved rounds of alternating
// order, reported as medians and the median of per-round ratios.
#pragma once

#include <lanejit/options.h>

#include <string>

namespace lanejit::bench {

struct DemoOptions {
  bool quick = false; // shorter warmup and samples, fewer rounds
  std::string only;   // run only cases whose name contains this
  CompileOptions compile = CompileOptions::fromEnvironment();
};

// Prints the table to stdout; returns 0 when every check passed, 1 otherwise.
int runDemo(const DemoOptions &options);

} // namespace lanejit::bench
