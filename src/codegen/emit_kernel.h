// emitKernel: the LLVM IR of one kernel plan.
//
// The entry is `void name(const LaunchArgs*, i64 row_begin, i64 row_end)`
// (kernel.h). Before the row loop it computes launch-uniform values and, if
// the plan hoists them, the alias guards. Per row it runs the plan's
// traversals in order; each walks its columns in packets of W lanes: full
// packets through the body the plan chose (Dense: constant all-on mask,
// plain vector loads and stores; Masked: run-time mask), then the tail
// (len mod W lanes) through the Masked body with masked loads and stores —
// never a scalar loop. Bodies are inline or helper calls (emit_packet.h).
// Row-uniform values are computed once per row (uniformity analysis).
#pragma once

#include "codegen/emit_packet.h"
#include "lower/plan.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace lanejit::codegen {

// With plan.column_split, the module also gets the column-split entry
// `partEntryName(entryName)` (lower::PartArgs; JIT only, not in AOT headers).
llvm::Function *emitKernel(const lower::KernelPlan &plan, llvm::Module &module,
                           const CodegenTarget &target, const std::string &entryName,
                           CodegenCounts *counts = nullptr);

inline std::string partEntryName(const std::string &entryName) {
  return entryName + ".part";
}

} // namespace lanejit::codegen
