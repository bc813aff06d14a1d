// The pass pipeline: the one place where pass order lives. Program passes
// rewrite the IR; then lowering starts from the unfused plan
// (lower/plan.h) and lowering passes shape it. Every pass can be turned off
// (program passes by name, lowering passes by their CompileOptions switch)
// without changing an output bit.
#pragma once

#include "lower/lowering_passes.h"

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <string>
#include <vector>

namespace lanejit::passes {

struct PassRecord {
  std::string name;
  std::string stage;    // "ir" or "lower"
  bool ran = false;     // false when disabled by a switch
  bool changed = false; // the IR's text or the plan's description changed
  double ms = 0;
  std::string what;  // what it did (lowering passes), one line
  std::string after; // IR or plan text after the pass, when it changed
};

// Runs every enabled pass in order, verifying the IR after each program
// pass and the plan after each lowering pass (lower/verify_plan.h). With options.dump_passes,
// prints the IR or plan after each pass that changed it; with options.time_passes, each pass's time
// (both to stderr).
lower::KernelPlan runPipeline(const Program &program, const CompileOptions &options, int lanes,
                              std::vector<PassRecord> *records = nullptr);

// For tests of one lowering pass (Before -> pass -> Expected): the plan the
// pipeline hands to lowering pass `pass` (the IR passes, the initial plan,
// every enabled lowering pass before it), and that pass applied alone as
// the pipeline applies it (traversal order restored, plan verified).
// Both throw Error(Kind::Compile) for an unknown pass name.
lower::KernelPlan planBeforePass(const Program &program, const std::string &pass,
                                 const CompileOptions &options, int lanes);
lower::LoweringResult runLoweringPass(const std::string &pass, lower::KernelPlan &plan,
                                      const CompileOptions &options);

struct PassInfo {
  std::string name, stage, summary;
  std::string option; // the CompileOptions field that turns it off, if any
};
// All passes, in order (for docs, `--help` and the report).
std::vector<PassInfo> passList();

} // namespace lanejit::passes
