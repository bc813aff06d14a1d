// Bounds the size of every basic block the code generator sees.
//
// SelectionDAG instruction selection works one basic block at a time, and
// some of its combines (store merging, chain alias walks) grow faster than
// linearly with the block: a packet body of a thousand writes or a chain of
// thousands of inline tanh expansions took minutes to select. Cutting long
// blocks into pieces of bounded size makes that work linear in the program.
// A cut is an unconditional branch: the pieces compute exactly what the one
// block did, only the selector looks less far for combines. No library
// kernel has a block near either bound (at most 676 instructions and 16
// memory operations at any W or switch setting), so their code is unchanged.
#pragma once

#include <cstddef>

namespace llvm {
class Module;
} // namespace llvm

namespace lanejit::jit {

constexpr size_t kMaxBlockInstructions = 1024;
constexpr size_t kMaxBlockMemoryOps = 64; // loads, stores and calls

// Splits every block of `module` past either bound; returns how many cuts
// it made. Run after the IR pipeline, whose CFG simplification would merge
// the pieces again.
size_t splitLongBlocks(llvm::Module &module);

} // namespace lanejit::jit
