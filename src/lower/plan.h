// The lowered form of a row program: which column loops ("traversals") run
// per row, in which order, what each computes, which values live in the
// kernel's workspace, and how aliasing between inputs and outputs is handled.
//
// A traversal visits columns [0, len) of a row in packets of W lanes. It may
// materialize values (store them to their workspace slot), accumulate
// reductions and store writes. initialPlan() builds the unfused schedule —
// every elementwise result materialized, one traversal per value, write and
// reduction, every packet masked, every alias guarded — and the lowering
// passes (src/driver/pipeline.cpp lists them) turn it into the fused one.
// Codegen only follows the plan.
#pragma once

#include "analysis/uniformity.h"

#include <lanejit/ir.h>
#include <lanejit/launch_abi.h>
#include <lanejit/options.h>

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace lanejit::lower {

enum class PacketKind { Dense, Masked };

// Columns at and past `live` need no computation: reductions would add their
// identity, writes store a row-uniform value. live = limit - col_begin
// (+1 when inclusive), clamped to [0, len], per row.
struct ColumnBound {
  Expr limit;              // i32, row- or launch-uniform
  Dim col_begin;           // first column of the column index compared with it
  bool inclusive;          // col <= limit (else col < limit)
  std::vector<Expr> fills; // per write of the traversal: the value past live
  // The predicate the bound was read from: true on every column the
  // traversal visits, so its selects there take their first operand.
  Expr predicate;
};

struct Traversal {
  Dim len;                            // columns visited per row
  int depth = 0;                      // 0: reads no reduction; k: needs depth k-1
  std::vector<Expr> materializations; // Lane values stored to their workspace slot
  std::vector<Expr> reductions;       // Reduce nodes finished by this traversal
  std::vector<int> writes;            // indices into Program::writes
  // Full packets run `full`, the tail (len mod W lanes) runs Masked.
  PacketKind full = PacketKind::Masked;
  // Packet bodies inlined into the row loop, or emitted as helper functions.
  bool inline_bodies = true;
  std::optional<ColumnBound> bound; // set by the bound-masked-columns pass
  // A sum's tail packet joins its accumulator by launch-uniform lane masks
  // (merge-masked adds), not a select per accumulator (branchless-tail).
  bool tail_masks = false;
  // Full packets store with non-temporal stores in calls that write at
  // least KernelPlan::stream_min_bytes per output (stream-stores).
  bool stream_stores = false;
  // Its packets prefetch the next row's row-tensor inputs in calls whose
  // row data reach KernelPlan::prefetch_min_bytes and whose rows (C x 4
  // bytes) reach prefetch_min_row_bytes (prefetch-next-row).
  bool prefetch_next_row = false;
  int64_t prefetch_min_row_bytes = 0;
};

// How one (input, output) pair is protected when the buffers overlap.
enum class AliasHandling {
  // The pair can never be exactly aliased (the input is a column vector or a
  // scalar): any overlap is handled by staging the whole input before the
  // launch (Kernel::run).
  StagedByCaller,
  // Exactly aliased (same address, same row stride), the traversal order is
  // proved safe: every element of the input is read before it is written.
  ProvedInPlace,
  // Exactly aliased and not proved safe: a guard checks the addresses and,
  // when they are equal, the input's row is copied to the workspace first.
  GuardedRowStaging,
};

// Whether `in` can be exactly `out` in memory, element (r, c) of one being
// element (r, c) of the other: a row tensor of the output's element type.
// Such a pair is the entry's to handle (proved in place or guarded); any
// other overlap the caller stages (runtime/prepared_call.cpp).
inline bool canAliasExactly(const Param &in, const Output &out) {
  return in.kind == ParamKind::RowTensor && in.type == out.type;
}

// Group and repeat nodes read their operand at other columns than their
// own (a run of g, or column j/g), so an earlier traversal stores it to the
// workspace whole and they load it from there: their operand stays
// materialized through every pass.
inline bool readsStoredOperand(const Node &n) {
  return n.kind == NodeKind::Group || n.kind == NodeKind::Repeat;
}
// The operands of a program's group and repeat nodes.
std::unordered_set<const Node *> storedOperands(const Program &program);

struct AliasPair {
  int input = 0, output = 0;
  AliasHandling handling = AliasHandling::GuardedRowStaging;
  std::string reason; // why, for the report
};

struct KernelPlan {
  Program program; // after the IR passes
  analysis::UniformityInfo uniformity;
  std::vector<Traversal> traversals; // per-row execution order
  // Values held in the workspace (one row's worth each, reused every row).
  std::vector<Expr> materialized;
  std::vector<AliasPair> alias;
  // Guards are launch-uniform; hoisted, they run once per entry call.
  bool hoist_guards = false;
  // The branchless-tail pass: a max/min reduction's tail packet joins
  // accumulator 0 (their order cannot change a bit); see also
  // Traversal::tail_masks.
  bool branchless_tail = false;
  // The one traversal runs all rows of a call as one row of rows x C
  // columns when every row tensor is dense (row stride C): set by the
  // flatten-rows pass for all-elementwise programs, checked per call.
  bool flatten_rows = false;
  // A column-bounded traversal's fills are vector stores in the kernel, not
  // a memset call per row (the fill-stores pass).
  bool fill_stores = false;
  // Output bytes per call (rows x C x 4) from which stream_stores
  // traversals use non-temporal stores.
  int64_t stream_min_bytes = 0;
  // Row data per call (rows x C x 4 bytes per row-tensor input and output)
  // from which a prefetch_next_row traversal prefetches.
  int64_t prefetch_min_bytes = 0;
  // LLVM's unroller may unroll the entry's loops further (codegen marks
  // them llvm.loop.unroll.disable otherwise: the plan's K packets per
  // group are the unrolling that pays).
  bool llvm_loop_unroll = false;
  // The leftover full packets of a row run in a loop (CompileOptions).
  bool leftover_loop = true;
  // Max/min reductions of short rows in entries compiled for C keep one
  // accumulator (CompileOptions).
  bool single_max_accumulator = true;
  // AArch64's generic entry: output loops run two packets per iteration
  // (CompileOptions).
  bool unroll_output_loops = true;
  // AArch64: bounded traversals' tails inside the row without lane masks
  // (CompileOptions).
  bool in_row_tails = true;
  // Max reductions over absolute values step by an integer max of the bits
  // (CompileOptions).
  bool integer_absmax = true;
  int lanes = 16;
  // Independent packet accumulators per reduction: lanes * accumulators
  // = kReductionLanes for every W, so the reduction order (and so every
  // output bit) does not depend on W or on any switch.
  int accumulators = 4;
  int block_rows = 32;

  // The workspace slot holding `node`'s value, or -1 if it is not materialized.
  int slotOf(const Node *node) const;
  bool isMaterialized(const Node *node) const { return slotOf(node) >= 0; }
  // Whether a packet of `t` loads `node` from the workspace (materialized by
  // an earlier traversal) instead of computing it.
  bool readsBack(const Traversal &t, const Node *node) const;
  // Inputs whose rows may be staged by a guard (one workspace slot each).
  std::vector<int> guardedInputs() const;
  // Workspace slots in order: materialized values, then staged input rows.
  std::vector<Dim> workspaceSlots() const;
};

// Virtual accumulator lanes of every reduction: column c adds into lane
// c mod kReductionLanes; the lanes are combined by a fixed halving tree.
constexpr int kReductionLanes = 64;

// The chunked association of long rows: a reduction's virtual lanes
// restart every kChunkColumns columns, and the chunks' 64-lane partials are
// added to the running total in chunk order before the halving tree. A row
// of at most one chunk is one chunk: today's order. The chunk is a fixed
// multiple of kReductionLanes (so of every W and K·W): never a tunable,
// since it decides bits. It is also the unit a column split hands out.
constexpr int64_t kChunkColumns = 64 * 1024;
static_assert(kChunkColumns % kReductionLanes == 0, "chunks hold whole groups of packets");

// Chunks of a traversal whose packets cover `live` columns (at least one).
constexpr int64_t chunksOf(int64_t live) {
  return live <= kChunkColumns ? 1 : (live + kChunkColumns - 1) / kChunkColumns;
}

// The column-split entry, `void(const LaunchArgs*, const PartArgs*)`:
// runs traversal `phase` of row `row` over chunks [chunk_begin, chunk_end)
// of its columns, and stores each chunk's kReductionLanes partials of every
// reduction of that traversal at partials[(reduction * partial_chunks +
// chunk) * kReductionLanes] (reductions numbered over the plan's traversals
// in order). It first finishes the reductions of earlier traversals from
// their partials: chunk order, then the halving tree, the same operations
// as the serial entry. args->workspace is the row's own, shared by the
// threads working on that row. JIT only: `lanejit aot` does not offer it.
struct PartArgs {
  int64_t row = 0;
  int64_t phase = 0;
  int64_t chunk_begin = 0, chunk_end = 0;
  float *partials = nullptr;
  int64_t partial_chunks = 0;
};
using NativePartEntry = void (*)(const lanejit_launch_args *args, const PartArgs *part);

// Workspace floats per slot are rounded up to this (64-byte alignment).
constexpr int64_t kWorkspaceAlign = 16;
// Floats of workspace an entry call needs for the bound C (Kernel::run and
// the entry compute slot offsets by this same rule).
int64_t workspaceFloats(const std::vector<Dim> &slots, int64_t cols);

// What a packet of `t` evaluates from: its materializations, its
// reductions' operands and its writes' values, in that order.
std::vector<Expr> rootsOf(const KernelPlan &plan, const Traversal &t);

// Every lane-varying value a packet of `t` evaluates, in canonical order:
// loads, computed values, and values read back from the workspace (listed,
// but not their operands).
std::vector<Expr> laneValuesOf(const KernelPlan &plan, const Traversal &t);

// The unfused starting point of lowering (see the file comment).
KernelPlan initialPlan(const Program &program, const CompileOptions &options, int lanes);

// Restores the execution order after passes changed traversals: by depth,
// materializations before the writes and reductions of their depth, and
// otherwise in creation order.
void orderTraversals(KernelPlan &plan);

// Human-readable plan, for dumps and `lanejit explain`.
std::string describePlan(const KernelPlan &plan);

} // namespace lanejit::lower
