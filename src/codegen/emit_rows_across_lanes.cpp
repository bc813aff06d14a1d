#include "codegen/emit_rows_across_lanes.h"

#include "codegen/rows_emitter.h"

#include "codegen/emit_ops.h"
#include "codegen/emit_packet.h"
#include "lower/choose_mapping.h"

#include <lanejit/dim.h>
#include <lanejit/error.h>
#include <lanejit/launch_abi.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace lanejit::codegen {

llvm::Constant *RowsEmitter::i64s(const std::vector<int64_t> &values) {
  std::vector<llvm::Constant *> c;
  for (int64_t v : values)
    c.push_back(b_.getInt64(v));
  return llvm::ConstantVector::get(c);
}

void RowsEmitter::createFunction(const std::string &name) {
  llvm::Type *ptr = llvm::PointerType::get(ctx_, 0);
  llvm::Type *i64 = b_.getInt64Ty();
  fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false),
                               llvm::Function::ExternalLinkage, name, module_);
  fn_->addFnAttr(llvm::Attribute::NoFree);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  if (!target_.cpu.empty())
    fn_->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty())
    fn_->addFnAttr("target-features", target_.features);
  // As the packet-local entry: packets stay whole registers.
  std::string width = std::to_string(W_ * 32);
  fn_->addFnAttr("min-legal-vector-width", width);
  fn_->addFnAttr("prefer-vector-width", width);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));

  Value *args = fn_->getArg(0);
  auto field = [&](llvm::Type *type, size_t offset, const char *n) {
    return b_.CreateLoad(type, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, offset), n);
  };
  Value *buffers = field(ptr, offsetof(lanejit_launch_args, buffers), "buffers");
  Value *strides = field(ptr, offsetof(lanejit_launch_args, row_strides), "row_strides");
  size_t count = program_.inputs.size() + program_.outputs.size();
  for (size_t i = 0; i < count; ++i) {
    bases_.push_back(b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, buffers, i)));
    strides_.push_back(b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, strides, i)));
  }
}

void RowsEmitter::emitLoop(Value *begin, Value *end, int64_t step,
                           const std::function<void(Value *)> &body) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx_, "rows.header", fn_);
  auto *bodyBlock = llvm::BasicBlock::Create(ctx_, "rows.body", fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, "rows.exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2, "row0");
  iv->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), bodyBlock, exit);
  b_.SetInsertPoint(bodyBlock);
  body(iv);
  iv->addIncoming(b_.CreateAdd(iv, b_.getInt64(step)), b_.GetInsertBlock());
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
}

llvm::Function *RowsEmitter::emit(const std::string &name) {
  segments_ = lower::rowLayoutApplies(program_, cols_);
  if (segments_) {
    P_ = lower::rowLayoutLanes(cols_, W_);
    G_ = W_ / P_;
    Q_ = static_cast<int>((cols_ + W_ - 1) / W_);
    packets_ = W_ / G_ * Q_;
    // Where segmentReduce's steps take each block row.
    std::vector<std::vector<int>> rows(static_cast<size_t>(P_), std::vector<int>(W_));
    for (int k = 0; k < P_; ++k)
      for (int j = 0; j < W_; ++j)
        rows[k][j] = k * G_ + j / P_;
    for (int n = P_; n > 1; n /= 2) {
      auto [lo, hi] = segmentHalves(W_, n);
      std::vector<std::vector<int>> next;
      for (size_t i = 0; i + 1 < rows.size(); i += 2) {
        std::vector<int> r(W_);
        for (int l = 0; l < W_; ++l)
          r[l] = lo[l] < W_ ? rows[i][lo[l]] : rows[i + 1][lo[l] - W_];
        next.push_back(r);
      }
      rows = std::move(next);
    }
    rowOfLane_ = rows.at(0);
    laneOfRow_.assign(W_, -1);
    for (int l = 0; l < W_; ++l)
      laneOfRow_.at(rowOfLane_[l]) = l;
  }
  createFunction(name);
  if (segments_ && Q_ > 1)
    findColumnBound();
  if (segments_) { // column-vector inputs, tiled once per call
    forEachNode(program_, [&](const Expr &n) {
      if (n->kind == NodeKind::Load && program_.inputs.at(n->param).kind == ParamKind::ColVector) {
        int64_t begin = dim(n->begin);
        for (int q = 0; q < Q_; ++q) {
          auto [it, fresh] = tiles_.try_emplace({n->param, begin, q});
          if (!fresh)
            continue;
          int count = static_cast<int>(std::min<int64_t>(P_, cols_ - q * W_));
          llvm::Type *part = memory(n->param, count);
          Value *ptr =
              b_.CreateConstInBoundsGEP1_64(memory(n->param), bases_.at(n->param), begin + q * W_);
          std::vector<int> tile;
          for (int j = 0; j < W_; ++j)
            tile.push_back(j % P_ < count ? j % P_ : -1);
          Value *loaded = widen(n->param, b_.CreateAlignedLoad(part, ptr, elementAlign(part)));
          it->second = b_.CreateShuffleVector(loaded, tile);
        }
      }
    });
  }
  Value *begin = fn_->getArg(1), *end = fn_->getArg(2);
  // Full blocks over [begin, fullEnd), then one block of the rest.
  Value *count = b_.CreateSub(end, begin);
  count = b_.CreateSelect(b_.CreateICmpSGT(count, b_.getInt64(0)), count, b_.getInt64(0));
  Value *fullEnd =
      b_.CreateAdd(begin, b_.CreateMul(b_.CreateUDiv(count, b_.getInt64(W_)), b_.getInt64(W_)));
  if (segments_) {
    // Rows of exactly C floats (every row tensor's stride C): the same
    // block with the stride a constant, so LLVM sees neighbouring rows'
    // loads and stores as one contiguous range and merges them into whole
    // packets (RMSNorm 65536x8, W = 16: 16 half-packet loads -> 8).
    Value *dense = b_.getTrue();
    for (size_t i = 0; i < strides_.size(); ++i) {
      bool rowTensor =
          i >= program_.inputs.size() || program_.inputs[i].kind == ParamKind::RowTensor;
      if (rowTensor)
        dense = b_.CreateAnd(dense, b_.CreateICmpEQ(strides_[i], b_.getInt64(cols_)));
    }
    auto *denseBlocks = llvm::BasicBlock::Create(ctx_, "dense", fn_);
    auto *strided = llvm::BasicBlock::Create(ctx_, "strided", fn_);
    auto *joined = llvm::BasicBlock::Create(ctx_, "full.done", fn_);
    b_.CreateCondBr(dense, denseBlocks, strided);
    b_.SetInsertPoint(denseBlocks);
    constantStride_ = true;
    emitLoop(begin, fullEnd, W_, [&](Value *row0) { emitBlock(row0, nullptr); });
    constantStride_ = false;
    b_.CreateBr(joined);
    b_.SetInsertPoint(strided);
    emitLoop(begin, fullEnd, W_, [&](Value *row0) { emitBlock(row0, nullptr); });
    b_.CreateBr(joined);
    b_.SetInsertPoint(joined);
  } else {
    emitLoop(begin, fullEnd, W_, [&](Value *row0) { emitBlock(row0, nullptr); });
  }
  auto *tail = llvm::BasicBlock::Create(ctx_, "tail", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, "done", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(fullEnd, end), tail, done);
  b_.SetInsertPoint(tail);
  emitBlock(fullEnd, b_.CreateSub(end, fullEnd, "active_rows"));
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
  return fn_;
}

void RowsEmitter::emitBlock(Value *row0, Value *activeRows) {
  row0_ = row0;
  activeRows_ = activeRows;
  lane_.clear();
  uniform_.clear();
  chunks_.clear();
  rowPointers_.clear();
  rowOrder_.clear();
  for (int i = 0; i < W_; ++i)
    rowOrder_.push_back(segments_ ? rowOfLane_.at(i) : i);
  rows64_ = b_.CreateAdd(b_.CreateVectorSplat(W_, row0), i64s(rowOrder_), "rows");
  if (segments_) {
    liveQ_ = Q_;
    if (!bound_) {
      emitSegmentBlock();
      return;
    }
    // The packets of a row any block row needs: up to the largest of the
    // rows' live columns (at least one packet). One copy of the block per
    // count, chosen by a switch (masked softmax 4096x64 at W = 16: a block
    // of rows 0-15 computes one packet of each row, not four).
    Value *limit = b_.CreateIntMaxReduce(uniformValue(bound_->limit), /*IsSigned=*/true);
    Value *live = b_.CreateAdd(b_.CreateSExt(limit, b_.getInt64Ty()),
                               b_.getInt64((bound_->inclusive ? 1 : 0) - dim(bound_->col_begin)));
    Value *count = b_.CreateUDiv(b_.CreateAdd(live, b_.getInt64(W_ - 1)), b_.getInt64(W_));
    count = b_.CreateSelect(b_.CreateICmpSLT(live, b_.getInt64(1)), b_.getInt64(1), count);
    auto *joined = llvm::BasicBlock::Create(ctx_, "bounded.done", fn_);
    auto *all = llvm::BasicBlock::Create(ctx_, "bounded.all", fn_);
    llvm::SwitchInst *choice = b_.CreateSwitch(count, all, static_cast<unsigned>(Q_ - 1));
    for (int n = 1; n <= Q_; ++n) {
      llvm::BasicBlock *copy = all;
      if (n < Q_) {
        copy = llvm::BasicBlock::Create(ctx_, "bounded." + std::to_string(n), fn_);
        choice->addCase(b_.getInt64(n), copy);
      }
      b_.SetInsertPoint(copy);
      liveQ_ = n;
      emitSegmentBlock();
      b_.CreateBr(joined);
    }
    b_.SetInsertPoint(joined);
    return;
  }

  // Every value first, so every load of the block precedes its first store.
  std::vector<std::map<int64_t, Value *>> written(program_.outputs.size());
  for (const Write &w : program_.writes) {
    int64_t begin = dim(w.begin), len = dim(w.len);
    for (int64_t j = 0; j < len; ++j)
      written[w.output][begin + j] =
          canonicalNaN(w.value->rowUniform() ? uniformValue(w.value) : value(w.value, j));
  }
  for (size_t o = 0; o < written.size(); ++o)
    storeRows(static_cast<int>(o), written[o]);
}

// `column`: the column, or with segments the block's packet.
Value *RowsEmitter::value(const Expr &e, int64_t column) {
  if (e->rowUniform())
    return segments_ ? broadcast(e, column) : uniformValue(e);
  if (auto it = lane_.find({e.get(), column}); it != lane_.end())
    return it->second;
  Value *v = nullptr;
  switch (e->kind) {
  case NodeKind::Load: {
    if (segments_) {
      v = program_.inputs.at(e->param).kind == ParamKind::RowTensor
              ? segmentPacket(e->param, dim(e->begin), column)
              : tiles_.at({e->param, dim(e->begin), column % Q_});
      break;
    }
    int64_t at = dim(e->begin) + column;
    if (program_.inputs.at(e->param).kind == ParamKind::RowTensor) {
      v = rowColumn(e->param, at);
    } else { // a column vector: one element for every row
      llvm::Type *element = memory(e->param);
      Value *ptr = b_.CreateConstInBoundsGEP1_64(element, bases_.at(e->param), at);
      v = b_.CreateVectorSplat(
          W_, widen(e->param, b_.CreateAlignedLoad(element, ptr, elementAlign(element))));
    }
  } break;
  case NodeKind::ColIndex:
    if (segments_) {
      std::vector<int> cols;
      for (int j = 0; j < W_; ++j)
        cols.push_back(static_cast<int>(dim(e->begin) + column % Q_ * W_) + j % P_);
      v = laneConstant(cols, b_.getInt32Ty());
      break;
    }
    v = b_.CreateVectorSplat(W_, b_.getInt32(static_cast<int32_t>(dim(e->begin) + column)));
    break;
  case NodeKind::Slice: v = value(e->args[0], dim(e->begin) + column); break;
  default: {
    std::vector<Value *> operands;
    for (const Expr &a : e->args)
      operands.push_back(value(a, column));
    v = emitElementwise(b_, *e, operands, target_.math);
  } break;
  }
  // Rows of several packets: a row tensor's packets are read again after
  // each reduction (segmentPackets_ is cleared there), not kept live.
  if (!(segments_ && Q_ > 1 && e->kind == NodeKind::Load))
    lane_.emplace(std::make_pair(e.get(), column), v);
  return v;
}

Value *RowsEmitter::uniformValue(const Expr &e) {
  if (auto it = uniform_.find(e.get()); it != uniform_.end())
    return it->second;
  Value *v = nullptr;
  switch (e->kind) {
  case NodeKind::Const: {
    llvm::Constant *c = e->type == DType::F32
                            ? static_cast<llvm::Constant *>(llvm::ConstantFP::get(f32(), e->value))
                        : e->type == DType::I32 ? b_.getInt32(static_cast<int32_t>(e->value))
                                                : b_.getInt1(e->value != 0);
    v = llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(W_), c);
  } break;
  case NodeKind::DimValue:
    v = b_.CreateVectorSplat(W_, b_.getInt32(static_cast<int32_t>(dim(e->begin))));
    break;
  case NodeKind::Load: { // a scalar input
    llvm::Type *element = memory(e->param);
    Value *loaded = b_.CreateAlignedLoad(element, bases_.at(e->param), elementAlign(element));
    v = b_.CreateVectorSplat(W_, widen(e->param, loaded));
  } break;
  case NodeKind::RowIndex: v = b_.CreateTrunc(rows64_, valueType(ctx_, DType::I32, W_)); break;
  case NodeKind::Reduce: v = segments_ ? segmentReduce(*e) : reduce(*e); break;
  default: {
    if ((v = rowModulo(*e)))
      break;
    std::vector<Value *> operands;
    for (const Expr &a : e->args)
      operands.push_back(uniformValue(a));
    v = emitElementwise(b_, *e, operands, target_.math);
  } break;
  }
  uniform_.emplace(e.get(), v);
  return v;
}

// `row mod D` for a constant power of two D > 0 (masked softmax's `c <= r
// mod C` at C = 8): the floored modulo is the low bits of the row's i32
// (two's complement, any sign), one AND instead of the general sequence's
// seven instructions. When D divides W, every block's rows start at begin
// plus a multiple of W, so the value is the same in every block: computed
// once per call, and the compares and permutes using it leave the loop
// (masked softmax 4096x8, W = 16: 12.8 -> 10.0 us). Null for anything else.
Value *RowsEmitter::rowModulo(const Node &n) {
  if (n.kind != NodeKind::Binary || n.binaryOp() != BinaryOp::Mod || n.type != DType::I32 ||
      n.args[0]->kind != NodeKind::RowIndex)
    return nullptr;
  const Node &d = *n.args[1];
  int64_t D = d.kind == NodeKind::DimValue ? dim(d.begin)
              : d.kind == NodeKind::Const  ? static_cast<int64_t>(d.value)
                                           : 0;
  if (D <= 0 || (D & (D - 1)) != 0 || D > (int64_t{1} << 30))
    return nullptr;
  llvm::Type *i32s = valueType(ctx_, DType::I32, W_);
  Value *mask = b_.CreateVectorSplat(W_, b_.getInt32(static_cast<int32_t>(D - 1)));
  if (W_ % D != 0)
    return b_.CreateAnd(b_.CreateTrunc(rows64_, i32s), mask, "row.mod");
  auto [it, fresh] = invariantRowMod_.try_emplace(D, nullptr);
  if (fresh) { // in the entry block, before its branch to the loops
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(fn_->getEntryBlock().getTerminator());
    Value *rows = b_.CreateAdd(b_.CreateVectorSplat(W_, fn_->getArg(1)), i64s(rowOrder_));
    it->second = b_.CreateAnd(b_.CreateTrunc(rows, i32s), mask, "row.mod.invariant");
  }
  return it->second;
}

Value *RowsEmitter::rowPointer(int buffer, int row) {
  auto [it, fresh] = rowPointers_.try_emplace({buffer, row}, nullptr);
  if (fresh) {
    Value *stride = constantStride_ ? b_.getInt64(cols_) : strides_.at(buffer);
    Value *index = b_.CreateMul(b_.CreateAdd(row0_, b_.getInt64(row)), stride);
    it->second = b_.CreateInBoundsGEP(memory(buffer), bases_.at(buffer), index);
  }
  return it->second;
}

// identity op x, the first fold of a virtual lane. For max and min that is
// x, up to a NaN's bits (emitIeeeMinMax gives a quiet NaN; x > -inf unless
// x is -inf, whose tie is x): no instruction. A NaN's bits never decide a
// result (compares, min and max look only at NaN-ness, arithmetic passes
// some NaN on) and every stored value is canonicalised, so the outputs are
// the same bits (masked softmax 4096x8, W = 16: 8 vfixupimmps per block).
Value *RowsEmitter::foldFromIdentity(ReduceOp op, Value *identity, Value *x) {
  if ((op != ReduceOp::Max && op != ReduceOp::Min) || !x->getType()->isFPOrFPVectorTy())
    return combine(op, identity, x);
  return x;
}

// One step of a reduction tree (emit_ops.h: vrangeps on AVX-512DQ, two
// x86 maxes or mins elsewhere).
Value *RowsEmitter::combine(ReduceOp op, Value *a, Value *b) {
  if (orderedSteps_ && (op == ReduceOp::Max || op == ReduceOp::Min))
    return emitOrderedMinMax(b_, op == ReduceOp::Max, a, b, &target_.math);
  return emitReductionStep(b_, op, a, b, &target_.math);
}

// What an output holds (emit_ops.h: one vfixupimmps on AVX-512).
Value *RowsEmitter::canonicalNaN(Value *x) {
  return emitCanonicalNaN(b_, x, &target_.math);
}

llvm::Function *emitRowsAcrossLanes(const lower::KernelPlan &plan, llvm::Module &module,
                                    const CodegenTarget &target, const std::string &name,
                                    int64_t cols) {
  return RowsEmitter(plan, module, target, cols).emit(name);
}

} // namespace lanejit::codegen
