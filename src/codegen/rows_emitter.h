// The rows-across-lanes emitter's class, shared by its three files: the
// entry, loops and dispatch (emit_rows_across_lanes.cpp), the row layout
// with L = P lanes per row (rows_row_layout.cpp), and one row per lane
// (rows_one_per_lane.cpp). Private to codegen; the interface is
// emit_rows_across_lanes.h, whose comment describes both layouts.
#pragma once

#include "codegen/emit_ops.h"
#include "codegen/target.h"
#include "lower/plan.h"

#include <lanejit/dim.h>
#include <lanejit/ir.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lanejit::codegen {

using llvm::Value;

// The two halves of every segment of n lanes in packets a and b, for one
// step of RowsEmitter::segmentReduce (rows_row_layout.cpp).
std::pair<std::vector<int>, std::vector<int>> segmentHalves(int W, int n);

class RowsEmitter {
public:
  RowsEmitter(const lower::KernelPlan &plan, llvm::Module &module, const CodegenTarget &target,
              int64_t cols)
      : plan_(plan), program_(plan.program), module_(module), ctx_(module.getContext()),
        target_(target), b_(ctx_), W_(plan.lanes), cols_(cols) {}

  llvm::Function *emit(const std::string &name);

private:
  int64_t dim(const Dim &d) const { return evaluateDim(d, cols_, "rows across lanes"); }
  llvm::Type *f32() { return b_.getFloatTy(); }
  llvm::Constant *i64s(const std::vector<int64_t> &values);

  void createFunction(const std::string &name);
  // for (r = begin; r < end; r += step) body(r).
  void emitLoop(Value *begin, Value *end, int64_t step, const std::function<void(Value *)> &body);

  // One block of W rows from row0: all W rows (activeRows null: plain
  // loads and stores), or the first activeRows (masked row loads and
  // stores); both transpose W x W chunks in registers.
  void emitBlock(Value *row0, Value *activeRows);

  Value *value(const Expr &e, int64_t column);
  Value *uniformValue(const Expr &e);
  Value *rowModulo(const Node &n);
  Value *reduce(const Node &n);
  // Column `column` of row tensor `buffer` across the block's rows.
  Value *rowColumn(int buffer, int64_t column);
  Value *rowPointer(int buffer, int row);
  // Buffer elements in memory (emit_ops.h: memoryType), `lanes` of them
  // (0: one), and the step to or from f32: a load widens, a store of a
  // value already made canonical (canonicalNaN) rounds.
  llvm::Type *memory(int buffer, int lanes = 0) {
    return memoryType(ctx_, program_.bufferType(static_cast<size_t>(buffer)), lanes);
  }
  Value *widen(int buffer, Value *loaded) {
    return emitWiden(b_, loaded, program_.bufferType(static_cast<size_t>(buffer)), &target_.math);
  }
  Value *narrow(int buffer, Value *x) {
    return emitRoundCanonical(b_, x, program_.bufferType(static_cast<size_t>(buffer)),
                              &target_.math);
  }
  // The lanes of a masked row load or store: row < activeRows_, column < count.
  Value *rowMask(int row, int64_t count);

  // W vectors of W elements: the transpose (a butterfly of 2-input shuffles).
  std::vector<Value *> transpose(std::vector<Value *> m);
  void storeRows(int output, const std::map<int64_t, Value *> &columns);

  // Segments (L = P): packet k of a block holds rows k*G ... k*G+G-1, row
  // g's column j at lane g*P + j; lanes past C are padding.
  llvm::Constant *laneConstant(const std::vector<int> &lanes, llvm::Type *element);
  Value *segmentPacket(int buffer, int64_t begin, int64_t k);
  Value *segmentTile(const Node &load);
  Value *broadcast(const Expr &e, int64_t k);
  Value *segmentReduce(const Node &n);
  Value *foldFromIdentity(ReduceOp op, Value *identity, Value *x);
  Value *combine(ReduceOp op, Value *a, Value *b);
  // segmentReduce's max or min tree with one packet per G rows.
  Value *orderedOrNaNTree(const std::vector<Value *> &packets,
                          const std::function<void(Value *)> &push,
                          std::vector<std::pair<int, Value *>> &pending);
  bool orderedSteps_ = false; // combine's max and min skip the NaN select
  Value *canonicalNaN(Value *x);
  void storeSegment(int output, int64_t k, Value *packet);

  const lower::KernelPlan &plan_;
  const Program &program_;
  llvm::Module &module_;
  llvm::LLVMContext &ctx_;
  const CodegenTarget &target_;
  llvm::IRBuilder<> b_;
  const int W_;
  const int64_t cols_;
  llvm::Function *fn_ = nullptr;
  std::vector<Value *> bases_, strides_;

  // The block being emitted.
  Value *row0_ = nullptr, *activeRows_ = nullptr, *rows64_ = nullptr;
  // The block's row offsets in the order of its row-uniform lanes, and
  // `row mod 2^k` for 2^k dividing W, the same in every block (rowModulo).
  std::vector<int64_t> rowOrder_;
  std::map<int64_t, Value *> invariantRowMod_;
  std::map<std::pair<const Node *, int64_t>, Value *> lane_;
  std::unordered_map<const Node *, Value *> uniform_;
  std::map<std::pair<int, int64_t>, std::vector<Value *>> chunks_; // (buffer, chunk) -> columns
  std::map<std::pair<int, int>, Value *> rowPointers_;

  // Segments: P lanes per row (the next power of two >= C), G = W / P rows
  // per packet, P packets per block. rowOfLane_: the block row whose
  // row-uniform values lane i of a row-uniform packet holds (the order
  // segmentReduce leaves rows in); laneOfRow_ its inverse.
  bool segments_ = false, constantStride_ = false;
  int P_ = 0, G_ = 0, Q_ = 1, packets_ = 0;
  std::vector<int> rowOfLane_, laneOfRow_;
  // (param, begin, packet of a row), emitted in the entry block.
  std::map<std::tuple<int, int64_t, int64_t>, Value *> tiles_;
  std::map<std::pair<const Node *, int64_t>, Value *> broadcast_;
  std::map<std::tuple<int, int64_t, int64_t>, Value *> segmentPackets_;

  // Column bounds (rows of several packets): the bound every bounded
  // traversal shares, the reductions and writes (with their fills) it
  // covers, and how many packets of each row the block being emitted
  // computes (the rest are past every block row's bound).
  void findColumnBound();
  void emitSegmentBlock();
  const lower::ColumnBound *bound_ = nullptr;
  std::unordered_map<const Node *, bool> boundedReductions_;
  std::map<size_t, Expr> boundedWrites_;
  int liveQ_ = 0;
};

} // namespace lanejit::codegen
