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

#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace lanejit::codegen {

// With `fixedCols`, the entry is specialised for that column count: it
// ignores LaunchArgs::cols and must only be called with calls of exactly
// that C (cache/column_entries.h). Packet counts, the tail's mask and the
// reductions' untouched accumulators become constants LLVM folds; the
// operations on each element, and so the bits, are the generic entry's.
llvm::Function *emitKernel(const lower::KernelPlan &plan, llvm::Module &module,
                           const CodegenTarget &target, const std::string &entryName,
                           CodegenCounts *counts = nullptr,
                           std::optional<int64_t> fixedCols = std::nullopt);

// The column-split entry `void name(const LaunchArgs*, const
// lower::PartArgs*)`: one traversal of one row over a range of column
// chunks (lower/plan.h). Compiled on demand in a module of its own, so the
// entry's object (inspect, aot, the persistent cache) is unchanged.
llvm::Function *emitPartKernel(const lower::KernelPlan &plan, llvm::Module &module,
                               const CodegenTarget &target, const std::string &name);

} // namespace lanejit::codegen
