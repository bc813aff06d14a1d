#include "codegen/emit_rows_across_lanes.h"

#include "codegen/emit_ops.h"
#include "codegen/emit_packet.h"
#include "lower/choose_mapping.h"

#include <lanejit/bind.h>
#include <lanejit/error.h>
#include <lanejit/launch_abi.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace lanejit::codegen {
namespace {

using llvm::Value;

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
          llvm::Type *part = valueType(ctx_, n->type, count);
          Value *ptr = b_.CreateConstInBoundsGEP1_64(f32(), bases_.at(n->param), begin + q * W_);
          std::vector<int> tile;
          for (int j = 0; j < W_; ++j)
            tile.push_back(j % P_ < count ? j % P_ : -1);
          it->second =
              b_.CreateShuffleVector(b_.CreateAlignedLoad(part, ptr, llvm::Align(4)), tile);
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
      Value *ptr = b_.CreateConstInBoundsGEP1_64(f32(), bases_.at(e->param), at);
      v = b_.CreateVectorSplat(W_, b_.CreateAlignedLoad(f32(), ptr, llvm::Align(4)));
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
  case NodeKind::Load: // a scalar input
    v = b_.CreateVectorSplat(
        W_, b_.CreateAlignedLoad(valueType(ctx_, e->type, 0), bases_.at(e->param), llvm::Align(4)));
    break;
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

// The packet-local order (lower::kReductionLanes): column c folds into
// virtual lane c mod 64, lanes start at the identity, and the lanes are
// combined by the halving tree v[i] = v[i] op v[i+s], s = 32, ..., 1. A
// lane past the row's columns holds the identity all along, so an
// operation with it as the right operand leaves v[i] bit for bit: skipped.
Value *RowsEmitter::reduce(const Node &n) {
  const Expr &arg = n.args[0];
  ReduceOp op = n.reduceOp();
  int64_t len = dim(*arg->len);
  llvm::Type *type = valueType(ctx_, arg->type, W_);
  Value *identity = reductionIdentity(type, op);
  int64_t used = std::min<int64_t>(len, lower::kReductionLanes);
  std::vector<Value *> v(static_cast<size_t>(used), identity);
  for (int64_t i = 0; i < used; ++i)
    for (int64_t c = i; c < len; c += lower::kReductionLanes)
      v[i] = combine(op, v[i], value(arg, c));
  for (int64_t s = lower::kReductionLanes / 2; s >= 1; s /= 2)
    for (int64_t i = 0; i < s && i + s < used; ++i)
      v[i] = combine(op, v[i], v[i + s]);
  Value *result = used > 0 ? v[0] : identity;
  if (op == ReduceOp::Mean) // as the packet-local combine: one division by float(len)
    result = b_.CreateFDiv(
        result, llvm::ConstantFP::get(type, static_cast<double>(static_cast<float>(len))));
  return result;
}

Value *RowsEmitter::rowPointer(int buffer, int row) {
  auto [it, fresh] = rowPointers_.try_emplace({buffer, row}, nullptr);
  if (fresh) {
    Value *stride = constantStride_ ? b_.getInt64(cols_) : strides_.at(buffer);
    Value *index = b_.CreateMul(b_.CreateAdd(row0_, b_.getInt64(row)), stride);
    it->second = b_.CreateInBoundsGEP(f32(), bases_.at(buffer), index);
  }
  return it->second;
}

// A row's chunk of W columns [chunk * W, + count): a plain load in a
// full block, else a masked one that touches nothing past `count` columns
// or in rows past the block's end.
Value *RowsEmitter::rowMask(int row, int64_t count) {
  Value *live = b_.CreateICmpSLT(b_.getInt64(row), activeRows_);
  Value *lanes = b_.CreateICmpSLT(
      laneIds(ctx_, W_), b_.CreateVectorSplat(W_, b_.getInt32(static_cast<int32_t>(count))));
  return b_.CreateAnd(b_.CreateVectorSplat(W_, live), lanes);
}

Value *RowsEmitter::rowColumn(int buffer, int64_t column) {
  llvm::Type *packet = valueType(ctx_, DType::F32, W_);
  // W rows of this chunk of columns, loaded and transposed once.
  int64_t chunk = column / W_;
  auto [it, fresh] = chunks_.try_emplace({buffer, chunk});
  if (fresh) {
    int64_t width = dim(program_.inputs.at(buffer).cols);
    int64_t count = std::min<int64_t>(W_, width - chunk * W_);
    std::vector<Value *> rows;
    for (int r = 0; r < W_; ++r) {
      Value *ptr = b_.CreateConstInBoundsGEP1_64(f32(), rowPointer(buffer, r), chunk * W_);
      if (!activeRows_ && count == W_) {
        rows.push_back(b_.CreateAlignedLoad(packet, ptr, llvm::Align(4)));
        continue;
      }
      if (activeRows_) {
        rows.push_back(b_.CreateMaskedLoad(packet, ptr, llvm::Align(4), rowMask(r, count),
                                           llvm::Constant::getNullValue(packet)));
        continue;
      }
      // A partial chunk of a full block: only its columns are read, then widened.
      llvm::Type *part = llvm::FixedVectorType::get(f32(), static_cast<unsigned>(count));
      std::vector<int> widen;
      for (int i = 0; i < W_; ++i)
        widen.push_back(i < count ? i : -1);
      rows.push_back(
          b_.CreateShuffleVector(b_.CreateAlignedLoad(part, ptr, llvm::Align(4)), widen));
    }
    it->second = transpose(std::move(rows));
  }
  return it->second.at(static_cast<size_t>(column % W_));
}

std::vector<Value *> RowsEmitter::transpose(std::vector<Value *> m) {
  // Stage d swaps bit d of the row and the column index of every element:
  // rows i and i+d exchange their off-diagonal d-blocks.
  for (int d = W_ / 2; d >= 1; d /= 2)
    for (int i = 0; i < W_; ++i) {
      if (i & d)
        continue;
      std::vector<int> lo, hi;
      for (int k = 0; k < W_; ++k) {
        lo.push_back(k & d ? W_ + k - d : k);
        hi.push_back(k & d ? W_ + k : k + d);
      }
      Value *a = m[i], *c = m[i + d];
      m[i] = b_.CreateShuffleVector(a, c, lo);
      m[i + d] = b_.CreateShuffleVector(a, c, hi);
    }
  return m;
}

void RowsEmitter::storeRows(int output, const std::map<int64_t, Value *> &columns) {
  int buffer = static_cast<int>(program_.inputs.size()) + output;
  int64_t width = dim(program_.outputs.at(output).cols);
  llvm::Type *packet = valueType(ctx_, DType::F32, W_);
  for (int64_t chunk = 0; chunk * W_ < width; ++chunk) {
    int64_t count = std::min<int64_t>(W_, width - chunk * W_);
    std::vector<Value *> m;
    for (int k = 0; k < W_; ++k) {
      auto it = columns.find(chunk * W_ + k);
      m.push_back(it != columns.end() ? it->second : llvm::PoisonValue::get(packet));
    }
    m = transpose(std::move(m));
    std::vector<int> narrow;
    for (int i = 0; i < count; ++i)
      narrow.push_back(i);
    for (int r = 0; r < W_; ++r) {
      Value *ptr = b_.CreateConstInBoundsGEP1_64(f32(), rowPointer(buffer, r), chunk * W_);
      if (activeRows_)
        b_.CreateMaskedStore(m[r], ptr, llvm::Align(4), rowMask(r, count));
      else if (count == W_)
        b_.CreateAlignedStore(m[r], ptr, llvm::Align(4));
      else
        b_.CreateAlignedStore(b_.CreateShuffleVector(m[r], narrow), ptr, llvm::Align(4));
    }
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
  llvm::Type *part = llvm::FixedVectorType::get(f32(), static_cast<unsigned>(count));
  std::vector<int> widen;
  for (int j = 0; j < P_; ++j)
    widen.push_back(j < count ? j : -1);
  std::vector<Value *> rows;
  for (int g = 0; g < G_; ++g) {
    int r = static_cast<int>(k / Q_) * G_ + g;
    Value *ptr = b_.CreateConstInBoundsGEP1_64(f32(), rowPointer(buffer, r), begin + q * W_);
    Value *row;
    if (activeRows_) {
      Value *live = b_.CreateVectorSplat(static_cast<unsigned>(count),
                                         b_.CreateICmpSLT(b_.getInt64(r), activeRows_));
      row =
          b_.CreateMaskedLoad(part, ptr, llvm::Align(4), live, llvm::Constant::getNullValue(part));
    } else {
      // Rows of several packets: volatile, so LLVM does not merge the
      // reads after a reduction with the ones before it and keep a block's
      // W x Q packets live across it, spilled (RMSNorm 4096x64: 64).
      row = b_.CreateAlignedLoad(part, ptr, llvm::Align(4), /*isVolatile=*/Q_ > 1);
    }
    rows.push_back(P_ == count ? row : b_.CreateShuffleVector(row, widen));
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
  return emitReductionStep(b_, op, a, b, &target_.math);
}

// What an output holds (emit_ops.h: one vfixupimmps on AVX-512).
Value *RowsEmitter::canonicalNaN(Value *x) {
  return emitCanonicalNaN(b_, x, &target_.math);
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
  if (Q_ == 1)
    for (Value *v : rowPackets)
      push(v);
  Value *result = pending.at(0).second;
  segmentPackets_.clear();
  if (op == ReduceOp::Mean)
    result = b_.CreateFDiv(
        result, llvm::ConstantFP::get(type, static_cast<double>(static_cast<float>(cols_))));
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
    Value *row = count == W_ ? packet : b_.CreateShuffleVector(packet, lanes);
    Value *ptr = b_.CreateConstInBoundsGEP1_64(f32(), rowPointer(buffer, r), q * W_);
    if (activeRows_)
      b_.CreateMaskedStore(row, ptr, llvm::Align(4),
                           b_.CreateVectorSplat(static_cast<unsigned>(count),
                                                b_.CreateICmpSLT(b_.getInt64(r), activeRows_)));
    else
      b_.CreateAlignedStore(row, ptr, llvm::Align(4));
  }
}

} // namespace

llvm::Function *emitRowsAcrossLanes(const lower::KernelPlan &plan, llvm::Module &module,
                                    const CodegenTarget &target, const std::string &name,
                                    int64_t cols) {
  return RowsEmitter(plan, module, target, cols).emit(name);
}

} // namespace lanejit::codegen
