// KernelEmitter: the state and steps of emitting one kernel's entry
// (emit_kernel.h). emit_kernel.cpp holds the function skeleton, uniform
// values, workspace, guards and the row loop; emit_traversal.cpp holds the
// traversals: packet loops, accumulators, column bounds and fills.
#pragma once

#include "codegen/emit_kernel.h"
#include "codegen/emit_ops.h"
#include "codegen/emit_packet.h"

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace lanejit::codegen {

class KernelEmitter {
public:
  KernelEmitter(const lower::KernelPlan &plan, llvm::Module &module, const CodegenTarget &target)
      : plan_(plan), program_(plan.program), module_(module), ctx_(module.getContext()),
        target_(target), b_(ctx_), launch_(ctx_), lanes_(plan.lanes),
        packets_(plan, target, counts_) {}

  // fixedCols: see emitKernel (emit_kernel.h).
  llvm::Function *emit(const std::string &name, CodegenCounts *counts,
                       std::optional<int64_t> fixedCols = std::nullopt);

  // The column-split entry `name(const LaunchArgs*, const lower::PartArgs*)`
  // (lower/plan.h): one traversal of one row over a range of column chunks.
  llvm::Function *emitPart(const std::string &name);

private:
  // ---- function skeleton ------------------------------------------------

  // The serial entry's signature, or the column-split entry's (part_).
  void createFunction(const std::string &name);

  void applyTargetAttributes(llvm::Function *fn);

  std::string bufferName(size_t i) const {
    return i < program_.inputs.size() ? program_.inputs[i].name
                                      : program_.outputs[i - program_.inputs.size()].name;
  }

  // for (iv = begin; iv < end; ++iv) body(iv); the builder ends after it.
  // Constant bounds of zero or one iteration emit no loop.
  void emitLoop(llvm::Value *begin, llvm::Value *end, const char *name,
                const std::function<void(llvm::Value *)> &body);

  // if (cond) body(); the builder ends after it. `unlikely` weighs the
  // branch so LLVM lays the body out of line. A constant condition emits
  // the body or nothing, without a branch (so does emitIfElse).
  void emitIf(llvm::Value *cond, const char *name, const std::function<void()> &body,
              bool unlikely = false);
  // if (cond) then(); else otherwise(); the builder ends after it.
  void emitIfElse(llvm::Value *cond, const char *name, const std::function<void()> &then,
                  const std::function<void()> &otherwise);

  llvm::AllocaInst *entryAlloca(llvm::Type *type, const std::string &name);

  // ---- launch- and row-uniform values ------------------------------------

  llvm::Value *dimValue(const Dim &d);

  llvm::Value *uniform(const Expr &e);

  llvm::Value *splatOf(const Expr &e);

  // Computes, at the current row-level point, every row- or launch-uniform
  // value a packet of `t` reads, so packet bodies only read splats.
  void prepareUniformOperands(const lower::Traversal &t);

  // ---- workspace and alias guards ------------------------------------------

  // Slot k starts at the sum of the rounded sizes of slots before it — the
  // rule lower::workspaceFloats() applies on the host.
  void prepareWorkspace();

  // For each guarded input: true when it is exactly an output it was not
  // proved safe with (same address and row stride). Addresses and strides
  // are launch-uniform, so a hoisted guard is computed once per call.
  std::vector<llvm::Value *> emitGuards(llvm::IRBuilder<> &b);

  // ---- traversals ----------------------------------------------------------

  // What buffer `i` holds in memory, one element (codegen/emit_ops.h).
  llvm::Type *elementType(size_t i) { return memoryType(ctx_, program_.bufferType(i), 0); }

  llvm::Value *rowBase(int buffer) {
    bool perRow = buffer >= static_cast<int>(program_.inputs.size()) ||
                  program_.inputs[buffer].kind == ParamKind::RowTensor;
    return perRow ? rowBases_.at(buffer) : bases_.at(buffer);
  }

  PacketScope entryScope();

  // A helper body for `kind` and the environment the row fills for it.
  struct Helper {
    llvm::Function *fn = nullptr;
    llvm::Value *env = nullptr;
  };

  Helper makeHelper(const lower::Traversal &t, int index, lower::PacketKind kind);

  // Accumulators of one traversal: accumulators[reduction][k].
  struct TraversalState {
    const lower::Traversal *traversal;
    // Packets per iteration of the packet loop: the accumulators per
    // reduction, or outputPackets() for a traversal without reductions.
    int packets = 1;
    // The traversal's length (the row's columns it spans), and whether its
    // tail packet, and its fills' tail, avoid lane-masked memory operations
    // where they lie inside the row (inRowTails).
    llvm::Value *len = nullptr;
    bool inRowTails = false;
    std::vector<std::vector<llvm::AllocaInst *>> accumulators;
    Helper dense, masked;
    // Per accumulator: the tail's lanes when it is the tail's accumulator,
    // no lanes otherwise (empty: the tail picks its accumulator by select).
    std::vector<llvm::Value *> tailMasks;
    // Per reduction, while the leftover packets run: the accumulators as a
    // [K x packet] array, indexed by the packet's accumulator at run time.
    std::vector<llvm::AllocaInst *> spilled;
    // Per reduction: every packet joins accumulator 0 (a max or min on a
    // short row of an entry compiled for C; see singleMaxAccumulator).
    std::vector<bool> oneAccumulator;
  };

  // Whether a reduction of `op` in an entry compiled for its C keeps one
  // accumulator instead of K. max and min are exactly associative and
  // commutative, so any grouping gives the same bits; on rows of a few
  // packets the K accumulators' set-up, the tail's choice among them and
  // their combine tree cost more than the dependency chain they break.
  bool singleMaxAccumulator(ReduceOp op, llvm::Type *type) const;
  // Packets per iteration of a traversal without reductions.
  int outputPackets() const;
  // Whether a column-bounded traversal's tails use whole-packet memory
  // operations where they lie inside the row.
  bool inRowTails(const lower::Traversal &t) const;

  // One packet: its body (inline or a helper call), then its reductions'
  // operands added into accumulator `packetAcc` (a constant index, or an
  // i64 chosen at run time for the tail; 0 for a oneAccumulator reduction).
  void emitPacket(TraversalState &s, lower::PacketKind kind, llvm::Value *column, llvm::Value *len,
                  llvm::Value *packetAcc, bool inRow = false);

  // The packets of [0, live) in chunks of lower::kChunkColumns: each
  // chunk's partials restart at the identity and join the running total in
  // chunk order (serial), or are stored to the partials (part_). A row of
  // one chunk runs exactly the unchunked loop's operations.
  void emitChunkedPackets(TraversalState &s, llvm::Value *live, llvm::Value *groups,
                          llvm::Value *rest, llvm::Value *full, llvm::Value *tail);

  // Chunks past the first: live > kChunkColumns ? (live - 1) / kChunkColumns : 0.
  llvm::Value *laterChunks(llvm::IRBuilder<> &b, llvm::Value *live);

  // Part entry: finishes the reductions of traversal `t` from their chunk
  // partials (chunk order, then the halving tree) into uniform_.
  void finishFromPartials(const lower::Traversal &t, int firstSlot);

  // The partials of reduction `slot`, chunk `chunk`, accumulator `k`.
  llvm::Value *partialPtr(int slot, llvm::Value *chunk, int k);

  // Fixed halving tree over the kReductionLanes virtual lanes: first across
  // accumulators (k with k + K/2), then inside the packet (lane i with
  // i + width/2). The same tree for every W, so the same bits.
  llvm::Value *combine(ReduceOp op, std::vector<llvm::Value *> accs);

  void emitTraversal(const lower::Traversal &t, int index);

  // The packets of a stream_stores traversal (emit_streaming.cpp, K = 1):
  // when the call is large enough and the row's writes share one
  // alignment, a masked head up to the first aligned column and full
  // packets with non-temporal stores; otherwise full packets from column 0
  // with normal stores; then the masked tail.
  void emitStreamingPackets(TraversalState &s, llvm::Value *live);
  // Non-temporal stores are weakly ordered: a fence before the entry
  // returns makes them visible to whoever reads the output next.
  bool streams() const;

  // prefetch-next-row: the next row's start of each row-tensor input; the
  // launch-uniform gate (the call's row data reach
  // KernelPlan::prefetch_min_bytes, its rows minRowBytes); and, behind it,
  // the prefetches of the lines a group of K packets at `column` covers in
  // those rows.
  struct NextRow {
    llvm::Value *base;
    int64_t element_bytes;
  };
  std::vector<NextRow> nextRowBases();
  llvm::Value *prefetchGate(int64_t minRowBytes);
  void emitPrefetches(llvm::Value *gate, const std::vector<NextRow> &nextRows,
                      llvm::Value *column, int K);

  // The masks of TraversalState::tailMasks: lanes below `tail` in
  // accumulator `rest`, computed where the packet counts are.
  std::vector<llvm::Value *> tailMasks(llvm::IRBuilder<> &b, llvm::Value *tail, llvm::Value *rest,
                                       int K);

  // live = clamp(limit - col_begin (+1), 0, len), per row.
  llvm::Value *liveColumns(const lower::ColumnBound &bound, llvm::Value *len);

  // Columns [live, len) of a bounded traversal's writes get the row-uniform
  // value the select chose there: full packets, then a masked tail.
  void emitFills(const lower::Traversal &t, llvm::Value *live, llvm::Value *len,
                 bool inRowTail = false);
  // The part entry's share of the fills: [live, len) within its chunks.
  void emitPartFills(const lower::Traversal &t, llvm::Value *live, llvm::Value *len);

  void emitRowLoop();

  // For a flattened plan: sets flatLen_ (rows x C when every row tensor is
  // dense, else C) and returns the row loop's end (one row when dense).
  llvm::Value *flattenRows();

  void forgetRowValues();

  const lower::KernelPlan &plan_;
  const Program &program_;
  llvm::Module &module_;
  llvm::LLVMContext &ctx_;
  const CodegenTarget &target_;
  llvm::IRBuilder<> b_;      // the current point in the row's code
  llvm::IRBuilder<> launch_; // end of the entry block: launch-uniform values
  int lanes_;
  llvm::Function *fn_ = nullptr;
  llvm::BasicBlock *entry_ = nullptr;
  llvm::Instruction *launchEnd_ = nullptr;
  llvm::Value *rowBegin_ = nullptr, *rowEnd_ = nullptr, *cols_ = nullptr, *row_ = nullptr;
  llvm::Value *rows_ = nullptr; // the call's rows (all threads')
  llvm::Value *workspace_ = nullptr;
  llvm::Value *flatLen_ = nullptr; // a flattened traversal's length
  // The column-split entry: its PartArgs fields, and the first partials
  // slot of the traversal being emitted.
  bool part_ = false;
  std::optional<int64_t> fixedCols_; // C is this constant (a specialised entry)
  llvm::Value *phase_ = nullptr, *chunkBegin_ = nullptr, *chunkEnd_ = nullptr;
  llvm::Value *partials_ = nullptr, *partialChunks_ = nullptr;
  int partSlot_ = 0;
  std::vector<llvm::Value *> bases_, strides_, rowBases_, workspaceSlots_;
  std::string name_;
  std::map<std::string, llvm::Value *> dims_;
  std::unordered_map<const Node *, llvm::Value *> uniform_, splat_;
  CodegenCounts counts_;
  PacketEmitter packets_; // after counts_, which it updates
};

} // namespace lanejit::codegen
