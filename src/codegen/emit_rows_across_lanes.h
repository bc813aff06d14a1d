// The rows-across-lanes entry: a block of W rows shares its packets, so a
// row's set-up, tail and reduction combine are paid once per W rows.
//
// Emitted for one exact column count C known when it is compiled (the
// kernel compiles it on first use per C, kernel/own_entries.cpp),
// with the serial entry's signature `void(const LaunchArgs*, i64
// row_begin, i64 row_end)`, so the row launcher and the pool run it over
// row ranges unchanged. It evaluates the plan's program directly (every
// column index, slice and length is a constant) in one of two layouts:
//
// Row layout (local lanes L = P), when every column vector of the program
// has C columns from column 0 and every write is a whole row (every
// library program but RoPE): rows stay row-major. For C <= W a packet
// holds W/P rows of P lanes (P the next power of two >= C, lanes past C
// padding), for W < C <= 64 a row is ceil(C/W) packets; elementwise work
// runs on packets as they lie. A reduction sets padding lanes to its
// identity, combines a row's packets by the halving tree's steps s >= W,
// then pairs of packets' segment halves (in-block and block shuffles, one
// op per pair), halving the lanes per row until one packet holds one lane
// per row; row-uniform values live in that order and reach a packet by one
// permute. Full blocks whose row tensors all have stride C run a copy of
// the block with the stride a constant (whole-packet loads and stores).
// Rows of several packets read row tensors again after each reduction,
// store each packet once it is computed, and skip the packets past every
// block row's column bound (bound-masked-columns).
//
// One row per lane (L = 1), for the other programs: a lane value at column
// j is a packet over the block's W rows; a block loads W-column chunks of
// its rows and transposes each W x W chunk in registers, and transposes
// back for its stores.
//
// Both keep the packet-local association (column c into virtual lane c mod
// 64, the fixed halving tree; operations with an identity operand left
// out), so the outputs are bitwise the packet-local kernel's for every W.
// The last block of a range, with fewer rows, uses masked row loads and
// stores, so rows past the range never touch memory. A block does every
// load before its first store, or (rows of several packets) every
// reduction's, after which a packet reads only its own rows at or past its
// own columns: an exactly aliased (in-place) call stays correct.
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
