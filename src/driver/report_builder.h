// Builds a kernel's CompileReport from its final plan, the pass records and
// what codegen emitted.
#pragma once

#include "codegen/target.h"
#include "lower/plan.h"
#include "driver/pipeline.h"

#include <lanejit/report.h>

#include <vector>

namespace lanejit {

CompileReport buildReport(const lower::KernelPlan &plan,
                          const std::vector<passes::PassRecord> &passes,
                          const codegen::CodegenCounts &counts);

} // namespace lanejit
