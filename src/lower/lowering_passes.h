// The lowering passes: each rewrites a KernelPlan (lower/plan.h) and says
// what it did. Their order and their switches live in src/driver/pipeline.cpp.
// None of them changes an output bit: they move work between traversals,
// registers and the workspace, or choose between code paths that compute
// the same values in the same order.
#pragma once

#include "lower/plan.h"

#include <string>

namespace lanejit::lower {

struct LoweringResult {
  bool changed = false;
  std::string what; // one line for dumps and the compile report
};

// Pointwise fusion: stop materializing elementwise results that feed other
// elementwise operations or writes; they are recomputed in the consumer's
// packet instead. Operands of reductions are left to fuseReductions.
LoweringResult fusePointwise(KernelPlan &plan);

// Reduction fusion: a reduction computes its operand in its own traversal
// instead of reading it back from the workspace.
LoweringResult fuseReductions(KernelPlan &plan);

// Output fusion: writes and reductions of equal length and depth share one
// traversal, when the writes into one output are provably disjoint.
LoweringResult fuseOutputs(KernelPlan &plan);

// Masked-column bounds (see ColumnBound in plan.h): a traversal whose every
// reduction and write selects on the same `col <= u` / `col < u` with u
// row-uniform stops computing at u, when what it skips is exactly nothing
// (reductions: the other branch is the reduction's identity bit for bit)
// or a row-uniform value (writes, stored by a fill loop).
LoweringResult boundMaskedColumns(KernelPlan &plan);

// Materialize or recompute: a lane value that a later traversal evaluates
// again after an earlier one computed it (masked softmax's exp(x - max)) is
// stored by the first and loaded by the later ones when recomputing it
// costs more than kMaterializeCost (opCost of its operations: a store and a
// load weigh 2 each); cheaper values (LayerNorm's x - mean) are recomputed.
// Needs the fused traversals and their column bounds.
constexpr int kMaterializeCost = 4;
LoweringResult materializeOrRecompute(KernelPlan &plan);

// Full packets run the body with the constant all-on mask.
LoweringResult specializeFullPackets(KernelPlan &plan);

// Alias analysis: for each row-tensor input and output, proves (or not)
// that the traversal order reads every element before writing it when the
// two are the same memory. Run after every pass that moves work between
// traversals.
LoweringResult proveInPlace(KernelPlan &plan);
// The proof itself: the first write of `output` that may overwrite a read
// of `input` before it happens when the two are exactly aliased, given the
// plan's traversal order; empty when the pair is safe. The plan verifier
// asks it again after every later pass.
std::string inPlaceConflict(const KernelPlan &plan, int input, int output);

// Alias guards compare buffer addresses and strides, which uniformity
// analysis finds launch-uniform: evaluate them once per entry call.
LoweringResult hoistGuards(KernelPlan &plan);

// Packet bodies inlined or emitted as helpers, by the cost rule or forced.
// The rule: inline when (estimated instructions per body) x (copies of the
// body the traversal emits) <= kInlineBudget, so code growth stays bounded
// while small bodies never pay a call per packet.
constexpr int kInlineBudget = 2048;
// Rough machine instructions of one lane-varying node per packet: 1, or an
// inline math expansion's measured size (exp/log/sigmoid 30, tanh/erf 40).
int opCost(const Node &node);
LoweringResult chooseInlining(KernelPlan &plan, CompileOptions::Inline policy);

// A reduction's tail packet joins its run-time-chosen accumulator without
// branches: max/min into accumulator 0, sums by lane masks (merge-masked
// adds) when K <= kMaskedTailAccumulators. Needs the final traversals.
constexpr int kMaskedTailAccumulators = 4;
LoweringResult branchlessTail(KernelPlan &plan);

// An all-elementwise plan (one traversal over C columns, no workspace, no
// column vectors, indices, slices or partial writes) runs a call's rows as
// one row of rows x C columns when every row tensor is dense. Needs the
// fused plan and the alias decisions (a staged row would need workspace).
LoweringResult flattenRows(KernelPlan &plan);

// Fills past a column bound stay vector stores in the kernel instead of
// becoming a memset call per row.
LoweringResult fillStores(KernelPlan &plan);

// Traversals that only write (no reductions, no column bound, full packets
// dense, bodies inlined) store their full packets with non-temporal stores
// when a call writes at least `min_bytes` per output; codegen aligns each
// row's stores with a shortened first packet. Needs the final traversals.
LoweringResult streamStores(KernelPlan &plan, int64_t min_bytes);

// In a row of two or more traversals, the one before the last prefetches
// the next row's row-tensor inputs, in calls whose row data reach
// `min_bytes`. Needs the final traversals.
LoweringResult prefetchNextRow(KernelPlan &plan, int64_t min_bytes);

} // namespace lanejit::lower
