// The pass pipeline: the one place where pass order lives.
#pragma once

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <string>
#include <vector>

namespace lanejit::passes {

struct PassRecord {
  std::string name;
  bool ran = false;     // false when disabled by a switch
  bool changed = false; // printed text differs from the input's
  double ms = 0;
  std::string ir; // the printed program after the pass, when it changed
};

// Runs every enabled pass in order, verifying after each one. With
// options.dump_passes, prints the IR after each pass that changed it; with
// options.time_passes, prints each pass's time (both to stderr).
Program runPipeline(const Program &program, const CompileOptions &options,
                    std::vector<PassRecord> *records = nullptr);

// Names and summaries of all passes, in order (for docs and `--help`).
std::vector<std::pair<std::string, std::string>> passList();

} // namespace lanejit::passes
