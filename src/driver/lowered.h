// One program lowered for one set of options: the plan, the resolved
// target and the pass records. compile() lowers once; the entries built
// later (per C, rows across lanes, the column split, dumps, the tuner's
// cost estimates) lower again, which gives the same plan.
#pragma once

#include "backend/backend.h"
#include "lower/plan.h"
#include "driver/pipeline.h"

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <cstddef>
#include <string>
#include <vector>

namespace lanejit {

// Largest number of buffers (inputs + outputs) a program may have; lets a
// call keep its argument block on the stack.
constexpr size_t kMaxBuffers = 64;

struct Lowered {
  lower::KernelPlan plan;
  backend::Target target;
  std::vector<passes::PassRecord> passes;
};

// Checks the options and the program (Error on either), then runs the pass
// pipeline at the options' lanes (0: the target's widest).
Lowered lowerProgram(const Program &program, const CompileOptions &options);

jit::OptimizerSettings optimizerSettings(const CompileOptions &options);

// A symbol name unique in the process, from the program's name.
std::string entryName(const Program &program);

} // namespace lanejit
