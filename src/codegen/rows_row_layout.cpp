// Rows across lanes in the row layout (local lanes L = P): packets as the
// rows lie, the reduction tree fused with the transpose, the column bound.
#include "codegen/rows_emitter.h"

#include "codegen/emit_ops.h"
#include "codegen/emit_packet.h"
#include "lower/choose_mapping.h"

#include <lanejit/dim.h>
#include <lanejit/error.h>
#include <lanejit/launch_abi.h>

#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace lanejit::codegen {

// The two halves of every segment of n lanes in packets a and b, for one
// step of segmentReduce: lane i of the result holds, from lo and hi, the
// segment lanes v[t] and v[t + n/2] of one row. Within each group of lanes
// (128-bit blocks while n <= 4, else the whole packet) the result takes a's
// segments' halves, then b's: in-block shuffles (vshufps) and block
// shuffles (vshuff32x4, vperm2f128), not two-source lane permutes.
std::pair<std::vector<int>, std::vector<int>> segmentHalves(int W, int n) {
  int group = n <= 4 ? std::min(4, W) : W;
  std::vector<int> lo, hi;
  for (int g0 = 0; g0 < W; g0 += group)
    for (int source : {0, W})
      for (int t = 0; t < group / n; ++t)
        for (int i = 0; i < n / 2; ++i) {
          lo.push_back(source + g0 + t * n + i);
          hi.push_back(source + g0 + t * n + n / 2 + i);
        }
  return {lo, hi};
}

// The block's values and stores in the row layout, packets of a row from
// liveQ_ on past every block row's column bound (findColumnBound).
void RowsEmitter::emitSegmentBlock() {
  lane_.clear();
  uniform_.clear();
  broadcast_.clear();
  segmentPackets_.clear();
  rowPointers_.clear();
  auto written = [&](size_t i, int64_t k) {
    auto fill = boundedWrites_.find(i);
    const Expr &e =
        fill != boundedWrites_.end() && k % Q_ >= liveQ_ ? fill->second : program_.writes[i].value;
    return canonicalNaN(e->rowUniform() ? broadcast(e, k) : value(e, k));
  };
  if (Q_ == 1) { // every value, then every store
    std::vector<std::vector<Value *>> packets(program_.outputs.size(),
                                              std::vector<Value *>(packets_));
    for (size_t i = 0; i < program_.writes.size(); ++i)
      for (int64_t k = 0; k < packets_; ++k)
        packets[program_.writes[i].output][k] = written(i, k);
    for (size_t o = 0; o < packets.size(); ++o)
      for (int64_t k = 0; k < packets_; ++k)
        storeSegment(static_cast<int>(o), k, packets[o][k]);
    return;
  }
  // Rows of several packets: every reduction first (they read every
  // packet), then each packet is computed and stored before the next is
  // read, so few are live (RMSNorm 4096x64: no output packet spilled).
  // In place stays correct: a packet reads only its own rows, at or past
  // its own columns (loads start at column >= 0 of a row, writes at 0),
  // so nothing a later packet reads has been stored yet.
  std::vector<Expr> stack;
  std::unordered_map<const Node *, bool> seen;
  for (size_t i = 0; i < program_.writes.size(); ++i) {
    stack.push_back(program_.writes[i].value);
    if (auto fill = boundedWrites_.find(i); fill != boundedWrites_.end())
      stack.push_back(fill->second);
  }
  while (!stack.empty()) {
    Expr e = stack.back();
    stack.pop_back();
    if (seen[e.get()])
      continue;
    seen[e.get()] = true;
    if (e->kind == NodeKind::Reduce)
      uniformValue(e);
    for (const Expr &a : e->args)
      stack.push_back(a);
  }
  for (int64_t k = 0; k < packets_; ++k)
    for (size_t i = 0; i < program_.writes.size(); ++i)
      storeSegment(program_.writes[i].output, k, written(i, k));
}

// The plan's column bounds (bound-masked-columns): past a row's live
// columns a bounded traversal's reductions would fold their identity and
// its writes store their fill. Used when every bounded traversal has the
// same bound (masked softmax's three), so one count of live packets per
// block serves all.
void RowsEmitter::findColumnBound() {
  for (const lower::Traversal &t : plan_.traversals) {
    if (!t.bound)
      continue;
    const lower::ColumnBound &b = *t.bound;
    if (bound_ && (bound_->limit.get() != b.limit.get() || bound_->inclusive != b.inclusive ||
                   dim(bound_->col_begin) != dim(b.col_begin))) {
      bound_ = nullptr;
      boundedReductions_.clear();
      boundedWrites_.clear();
      return;
    }
    bound_ = &b;
    for (const Expr &r : t.reductions)
      boundedReductions_[r.get()] = true;
    for (size_t i = 0; i < t.writes.size() && i < b.fills.size(); ++i)
      boundedWrites_[static_cast<size_t>(t.writes[i])] = b.fills[i];
  }
}

llvm::Constant *RowsEmitter::laneConstant(const std::vector<int> &lanes, llvm::Type *element) {
  std::vector<llvm::Constant *> c;
  for (int v : lanes)
    c.push_back(llvm::ConstantInt::get(element, static_cast<uint64_t>(v)));
  return llvm::ConstantVector::get(c);
}

// Packet k of row tensor `buffer` from column `begin`: each of its G rows'
// C columns loaded as they lie (a masked load past the block's rows), the
// rows concatenated; padding lanes are left undefined (reductions replace
// them with the identity, stores skip them).
Value *RowsEmitter::segmentPacket(int buffer, int64_t begin, int64_t k) {
  auto [it, fresh] = segmentPackets_.try_emplace({buffer, begin, k});
  if (!fresh)
    return it->second;
  int q = static_cast<int>(k % Q_), count = static_cast<int>(std::min<int64_t>(P_, cols_ - q * W_));
  llvm::Type *part = memory(buffer, count);
  llvm::Align align = elementAlign(part);
  std::vector<int> pad;
  for (int j = 0; j < P_; ++j)
    pad.push_back(j < count ? j : -1);
  std::vector<Value *> rows;
  for (int g = 0; g < G_; ++g) {
    int r = static_cast<int>(k / Q_) * G_ + g;
    Value *ptr =
        b_.CreateConstInBoundsGEP1_64(memory(buffer), rowPointer(buffer, r), begin + q * W_);
    Value *row;
    if (activeRows_) {
      Value *live = b_.CreateVectorSplat(static_cast<unsigned>(count),
                                         b_.CreateICmpSLT(b_.getInt64(r), activeRows_));
      row = b_.CreateMaskedLoad(part, ptr, align, live, llvm::Constant::getNullValue(part));
    } else {
      // Rows of several packets: volatile, so LLVM does not merge the
      // reads after a reduction with the ones before it and keep a block's
      // W x Q packets live across it, spilled (RMSNorm 4096x64: 64).
      row = b_.CreateAlignedLoad(part, ptr, align, /*isVolatile=*/Q_ > 1);
    }
    row = widen(buffer, row);
    rows.push_back(P_ == count ? row : b_.CreateShuffleVector(row, pad));
  }
  // Concatenate neighbours until one packet remains.
  while (rows.size() > 1) {
    std::vector<Value *> next;
    int n =
        static_cast<int>(llvm::cast<llvm::FixedVectorType>(rows[0]->getType())->getNumElements());
    std::vector<int> both;
    for (int j = 0; j < 2 * n; ++j)
      both.push_back(j);
    for (size_t i = 0; i < rows.size(); i += 2)
      next.push_back(b_.CreateShuffleVector(rows[i], rows[i + 1], both));
    rows = std::move(next);
  }
  it->second = rows[0];
  return rows[0];
}

Value *RowsEmitter::broadcast(const Expr &e, int64_t k) {
  auto [it, fresh] = broadcast_.try_emplace({e.get(), k});
  if (fresh) {
    std::vector<int> from;
    for (int j = 0; j < W_; ++j)
      from.push_back(laneOfRow_.at(static_cast<size_t>(k / Q_ * G_ + j / P_)));
    it->second = b_.CreateShuffleVector(uniformValue(e), from);
  }
  return it->second;
}

// The packet-local association for C <= P <= 64: column c is virtual lane
// c, folded once from the identity; the halving tree's steps s >= P pair
// lanes past C only (left out, as in reduce()), and steps s = P/2 ... 1
// pair segment lanes t and t + s, padding lanes holding the identity. Each
// step combines two packets' segment halves (segmentHalves) into one
// packet of twice the rows, so P packets end as one, a lane per row.
Value *RowsEmitter::segmentReduce(const Node &n) {
  const Expr &arg = n.args[0];
  ReduceOp op = n.reduceOp();
  llvm::Type *type = valueType(ctx_, arg->type, W_);
  Value *identity = reductionIdentity(type, op);
  bool bounded = boundedReductions_.count(&n) > 0;
  // Emitted row by row, each step as soon as its operands exist (a stack
  // of (step, packet)), so few packets are live at once; the pairs are
  // the level-by-level tree's.
  std::vector<std::pair<int, Value *>> pending;
  auto push = [&](Value *v) {
    int level = 0;
    while (!pending.empty() && pending.back().first == level) {
      auto [lo, hi] = segmentHalves(W_, P_ >> level);
      Value *a = pending.back().second;
      pending.pop_back();
      v = combine(op, b_.CreateShuffleVector(a, v, lo), b_.CreateShuffleVector(a, v, hi));
      ++level;
    }
    pending.emplace_back(level, v);
  };
  std::vector<Value *> rowPackets;
  for (int64_t row = 0; row < packets_ / Q_; ++row) {
    std::vector<Value *> packets;
    for (int q = 0; q < Q_; ++q) {
      if (bounded && q >= liveQ_) { // past every block row's bound: the identity
        packets.push_back(nullptr);
        continue;
      }
      Value *x = foldFromIdentity(op, identity, value(arg, row * Q_ + q));
      if (cols_ - q * W_ < P_) { // padding lanes: the identity
        std::vector<llvm::Constant *> live;
        for (int j = 0; j < W_; ++j)
          live.push_back(b_.getInt1(q * W_ + j % P_ < cols_));
        x = b_.CreateSelect(llvm::ConstantVector::get(live), x, identity);
      }
      packets.push_back(x);
    }
    // Rows of Q packets: the tree's steps s >= W pair packet q with packet
    // q + s/W of the same row (none past the row's last packet: identity).
    for (int s = static_cast<int>(lower::kReductionLanes) / 2; s >= W_; s /= 2)
      for (int q = 0; q < s / W_ && q + s / W_ < Q_; ++q)
        if (packets[q + s / W_]) // x op identity == x: left out
          packets[q] = combine(op, packets[q], packets[q + s / W_]);
    rowPackets.push_back(packets[0]);
    if (Q_ > 1)
      push(rowPackets.back());
  }
  // One packet per G rows: all first, then the steps (measured faster at
  // C = 8: masked softmax 4096x8 1.67 -> 1.50 of avx512-rows).
  Value *result = nullptr;
  if (Q_ == 1 && P_ > 1 && (op == ReduceOp::Max || op == ReduceOp::Min) &&
      type->isFPOrFPVectorTy()) {
    result = orderedOrNaNTree(rowPackets, push, pending);
  } else {
    if (Q_ == 1)
      for (Value *v : rowPackets)
        push(v);
    result = pending.at(0).second;
  }
  segmentPackets_.clear();
  if (op == ReduceOp::Mean)
    result = b_.CreateFDiv(
        result, llvm::ConstantFP::get(type, static_cast<double>(static_cast<float>(cols_))));
  return result;
}

// A max or min tree over packets with no NaN is the same tree without the
// NaN select of every step (emitOrderedMinMax: one vrangeps instead of
// three instructions on AVX-512DQ). So the block tests its packets for a
// NaN once (a compare and an OR each, off the tree's critical path) and
// runs that tree, or the full one when a NaN is there: the same bits
// either way (masked softmax 4096x8, W = 16: 9.7 -> 9.3 us).
Value *RowsEmitter::orderedOrNaNTree(const std::vector<Value *> &packets,
                                     const std::function<void(Value *)> &push,
                                     std::vector<std::pair<int, Value *>> &pending) {
  Value *nan = nullptr;
  for (Value *v : packets) {
    Value *u = b_.CreateFCmpUNO(v, v);
    nan = nan ? b_.CreateOr(nan, u) : u;
  }
  Value *any = b_.CreateICmpNE(b_.CreateBitCast(nan, b_.getIntNTy(static_cast<unsigned>(W_))),
                               b_.getIntN(static_cast<unsigned>(W_), 0), "any.nan");
  auto *ordered = llvm::BasicBlock::Create(ctx_, "minmax.ordered", fn_);
  auto *withNaN = llvm::BasicBlock::Create(ctx_, "minmax.nan", fn_);
  auto *joined = llvm::BasicBlock::Create(ctx_, "minmax.done", fn_);
  b_.CreateCondBr(any, withNaN, ordered, llvm::MDBuilder(ctx_).createBranchWeights(1, 1000));
  auto tree = [&](bool noNaN) {
    orderedSteps_ = noNaN;
    pending.clear();
    for (Value *v : packets)
      push(v);
    orderedSteps_ = false;
    return pending.at(0).second;
  };
  b_.SetInsertPoint(ordered);
  Value *fast = tree(true);
  llvm::BasicBlock *fastEnd = b_.GetInsertBlock();
  b_.CreateBr(joined);
  b_.SetInsertPoint(withNaN);
  Value *full = tree(false);
  llvm::BasicBlock *fullEnd = b_.GetInsertBlock();
  b_.CreateBr(joined);
  b_.SetInsertPoint(joined);
  llvm::PHINode *result = b_.CreatePHI(fast->getType(), 2, "minmax");
  result->addIncoming(fast, fastEnd);
  result->addIncoming(full, fullEnd);
  return result;
}

void RowsEmitter::storeSegment(int output, int64_t k, Value *packet) {
  int buffer = static_cast<int>(program_.inputs.size()) + output;
  for (int g = 0; g < G_; ++g) {
    int q = static_cast<int>(k % Q_), r = static_cast<int>(k / Q_) * G_ + g;
    int count = static_cast<int>(std::min<int64_t>(P_, cols_ - q * W_));
    std::vector<int> lanes;
    for (int j = 0; j < count; ++j)
      lanes.push_back(g * P_ + j);
    Value *row = narrow(buffer, count == W_ ? packet : b_.CreateShuffleVector(packet, lanes));
    Value *ptr = b_.CreateConstInBoundsGEP1_64(memory(buffer), rowPointer(buffer, r), q * W_);
    llvm::Align align = elementAlign(memory(buffer));
    if (activeRows_)
      b_.CreateMaskedStore(row, ptr, align,
                           b_.CreateVectorSplat(static_cast<unsigned>(count),
                                                b_.CreateICmpSLT(b_.getInt64(r), activeRows_)));
    else
      b_.CreateAlignedStore(row, ptr, align);
  }
}

} // namespace lanejit::codegen
