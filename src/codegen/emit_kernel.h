// emitKernel: the LLVM IR of one kernel plan.
//
// The entry is `void name(const LaunchArgs*, i64 row_begin, i64 row_end)`
// (kernel.h). Per row it runs the plan's traversals in order; each
// traversal walks its columns in packets of W lanes: full packets through
// the body the plan chose (Dense: constant all-on mask, plain vector loads
// and stores; Masked: run-time mask), then the tail (len mod W lanes)
// through the Masked body with masked loads and stores — never a scalar
// loop. Launch-uniform values are computed once before the row loop,
// row-uniform ones once per row (uniformity analysis).
#pragma once

#include "codegen/math.h"
#include "lower/plan.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace lanejit::codegen {

struct CodegenCounts {
  int dense_bodies = 0;  // packet bodies emitted with the constant all-on mask
  int masked_bodies = 0; // packet bodies emitted with a run-time mask
};

struct CodegenTarget {
  std::string cpu;
  std::string features;
  MathTarget math;
};

llvm::Function *emitKernel(const lower::KernelPlan &plan, llvm::Module &module,
                           const CodegenTarget &target, const std::string &entryName,
                           CodegenCounts *counts = nullptr);

} // namespace lanejit::codegen
