// The rows-across-lanes entry: local lanes L = 1, each lane of a W-lane
// packet runs one whole row, a packet holds W rows.
//
// Emitted for one exact column count C known when it is compiled (the
// runtime compiles it on first use per C, runtime/rows_across_lanes.h),
// with the serial entry's signature `void(const LaunchArgs*, i64
// row_begin, i64 row_end)`, so the row launcher and the pool run it over
// row ranges unchanged. It evaluates the plan's program directly, column
// by column (every column index, slice and length is a constant): a lane
// value at column j is a packet over W rows, a row-uniform value a packet
// of the W rows' values. A reduction's 64 virtual lanes are folded and
// combined by the packet-local kernel's halving tree, with every operation
// whose operand is the identity left out (identity op x == x bit for
// bit), so the outputs are bitwise the packet-local kernel's for every W.
//
// Blocks of W rows: a block loads W-column chunks of its rows with plain
// vector loads and transposes each W x W chunk in registers (log2 W stages
// of two-input shuffles), and transposes back for its stores; the last
// block of a range, with fewer rows, does the same with masked row loads
// and stores, so rows past the range never touch memory (one code shape
// for both; per-column masked gathers and scatters were not faster, see
// docs/architecture.md). A block does every load before its first store:
// an exactly aliased (in-place) call stays correct.
#pragma once

#include "codegen/target.h"
#include "lower/plan.h"

#include <cstdint>
#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace lanejit::codegen {

llvm::Function *emitRowsAcrossLanes(const lower::KernelPlan &plan, llvm::Module &module,
                                    const CodegenTarget &target, const std::string &name,
                                    int64_t cols);

} // namespace lanejit::codegen
