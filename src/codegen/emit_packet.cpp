#include "codegen/emit_packet.h"

#include "codegen/emit_ops.h"

#include <lanejit/error.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

namespace lanejit::codegen {

using llvm::Value;

llvm::Constant *laneIds(llvm::LLVMContext &ctx, int lanes) {
  std::vector<llvm::Constant *> ids;
  for (int i = 0; i < lanes; ++i)
    ids.push_back(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), i));
  return llvm::ConstantVector::get(ids);
}

Value *PacketEmitter::memoryLoad(llvm::Type *type, Value *ptr, bool workspace) {
  llvm::IRBuilder<> &b = *scope_->b;
  counts_.workspace_loads += workspace;
  if (!mask_ || inRow_) {
    ++counts_.loads;
    return b.CreateAlignedLoad(type, ptr, elementAlign(type));
  }
  ++counts_.masked_loads;
  return b.CreateMaskedLoad(type, ptr, elementAlign(type), mask_,
                            llvm::Constant::getNullValue(type));
}

void PacketEmitter::memoryStore(Value *value, Value *ptr, bool workspace) {
  llvm::IRBuilder<> &b = *scope_->b;
  counts_.workspace_stores += workspace;
  if (!mask_ || inRow_) {
    ++counts_.stores;
    llvm::StoreInst *store = b.CreateAlignedStore(
        value, ptr,
        streamAlign_ && !workspace ? llvm::Align(streamAlign_) : elementAlign(value->getType()));
    if (streamAlign_ && !workspace)
      store->setMetadata(
          llvm::LLVMContext::MD_nontemporal,
          llvm::MDNode::get(b.getContext(), llvm::ConstantAsMetadata::get(b.getInt32(1))));
    return;
  }
  ++counts_.masked_stores;
  b.CreateMaskedStore(value, ptr, elementAlign(value->getType()), mask_);
}

Value *PacketEmitter::compute(const Node &n, Value *column) {
  // A bounded traversal visits only columns where its predicate holds (the
  // lanes past the bound in its tail packet are masked off), so a select on
  // that predicate is its first operand there: no compare per packet.
  if (n.kind == NodeKind::Select && traversal_ && traversal_->bound &&
      traversal_->bound->predicate && n.args[0].get() == traversal_->bound->predicate.get())
    return lane(n.args[1], column);
  if (n.kind == NodeKind::Unary) {
    UnaryOp op = n.unaryOp();
    counts_.math_expansions += op == UnaryOp::Exp || op == UnaryOp::Log || op == UnaryOp::Tanh ||
                               op == UnaryOp::Sigmoid || op == UnaryOp::Rsqrt || op == UnaryOp::Erf;
  }
  std::vector<Value *> operands;
  for (const Expr &a : n.args)
    operands.push_back(lane(a, column));
  return emitElementwise(*scope_->b, n, operands, target_.math);
}

// W floats of the workspace at `indices` (<W x i32>), lanes off in a masked
// packet's mask reading nothing (they take `passThrough`).
Value *PacketEmitter::gather(Value *base, Value *indices, Value *passThrough) {
  llvm::IRBuilder<> &b = *scope_->b;
  ++counts_.workspace_loads;
  Value *mask = mask_ ? mask_ : llvm::Constant::getAllOnesValue(
                                    llvm::FixedVectorType::get(b.getInt1Ty(), plan_.lanes));
  Value *pointers = b.CreateInBoundsGEP(b.getFloatTy(), base, indices);
  return b.CreateMaskedGather(passThrough->getType(), pointers, llvm::Align(4), mask,
                              passThrough);
}

// A dense packet's max or min over runs of g (a multiple of W): the g
// packets of its W runs loaded whole, each run's packets combined, then
// pairs of vectors halved into one (2(W-1) shuffles, W-1 steps). Max and
// min are associative and commutative and stored NaNs are canonical, so
// this order gives the bits of the gathers' left-to-right one.
Value *PacketEmitter::groupMaxMinOfPackets(const Node &n, Value *base, Value *column) {
  llvm::IRBuilder<> &b = *scope_->b;
  const int W = plan_.lanes;
  const int64_t perRun = n.groupSize() / W;
  llvm::Type *vec = llvm::FixedVectorType::get(b.getFloatTy(), W);
  Value *start = b.CreateMul(column, b.getInt64(n.groupSize()));
  std::vector<Value *> runs;
  for (int k = 0; k < W; ++k) {
    Value *acc = nullptr;
    for (int64_t m = 0; m < perRun; ++m) {
      Value *at = b.CreateAdd(start, b.getInt64((k * perRun + m) * W));
      Value *x = b.CreateAlignedLoad(vec, b.CreateInBoundsGEP(b.getFloatTy(), base, at),
                                     llvm::Align(4));
      acc = acc ? emitReductionStepOf(b, n, acc, x, plan_.integer_absmax, &target_.math) : x;
    }
    runs.push_back(acc);
  }
  counts_.workspace_loads += W * perRun;
  // Each vector holds W/s runs' partials in segments of s lanes; a pair's
  // segments are halved: the low halves against the high halves.
  for (int s = W; s > 1; s /= 2) {
    std::vector<int> low, high;
    for (int from : {0, W})
      for (int seg = 0; seg < W; seg += s)
        for (int i = 0; i < s / 2; ++i) {
          low.push_back(from + seg + i);
          high.push_back(from + seg + s / 2 + i);
        }
    std::vector<Value *> next;
    for (size_t p = 0; p < runs.size(); p += 2)
      next.push_back(emitReductionStepOf(b, n, b.CreateShuffleVector(runs[p], runs[p + 1], low),
                                         b.CreateShuffleVector(runs[p], runs[p + 1], high),
                                         plan_.integer_absmax, &target_.math));
    runs = std::move(next);
  }
  return runs[0];
}

// Lane k reduces columns (column+k)*g .. (column+k)*g + g-1 of the operand,
// left to right: the same steps for every W. Up to 32 columns a gather
// each, unrolled; longer runs in a loop.
Value *PacketEmitter::groupReduce(const Node &n, Value *column) {
  llvm::IRBuilder<> &b = *scope_->b;
  const int W = plan_.lanes;
  const int64_t g = n.groupSize();
  Value *base = scope_->workspace(plan_.slotOf(n.args[0].get()));
  bool maxMin = n.reduceOp() == ReduceOp::Max || n.reduceOp() == ReduceOp::Min;
  if (!mask_ && maxMin && g % W == 0 && g <= 256)
    return groupMaxMinOfPackets(n, base, column);
  Value *lanes = b.CreateAdd(b.CreateVectorSplat(W, b.CreateTrunc(column, b.getInt32Ty())),
                             laneIds(b.getContext(), W));
  Value *first = b.CreateMul(lanes, b.CreateVectorSplat(W, b.getInt32(static_cast<int32_t>(g))));
  llvm::Type *vec = llvm::FixedVectorType::get(b.getFloatTy(), W);
  Value *identity = reductionIdentity(vec, n.reduceOp());
  auto step = [&](Value *acc, Value *offset) {
    Value *x = gather(base, b.CreateAdd(first, b.CreateVectorSplat(W, offset)), identity);
    return emitReductionStepOf(b, n, acc, x, plan_.integer_absmax, &target_.math);
  };
  Value *acc = identity;
  if (g <= 32) {
    for (int64_t i = 0; i < g; ++i)
      acc = step(acc, b.getInt32(static_cast<int32_t>(i)));
  } else {
    llvm::Function *fn = b.GetInsertBlock()->getParent();
    llvm::BasicBlock *pre = b.GetInsertBlock();
    auto *body = llvm::BasicBlock::Create(b.getContext(), "group.body", fn);
    auto *exit = llvm::BasicBlock::Create(b.getContext(), "group.exit", fn);
    b.CreateBr(body);
    b.SetInsertPoint(body);
    llvm::PHINode *i = b.CreatePHI(b.getInt32Ty(), 2, "group.i");
    llvm::PHINode *partial = b.CreatePHI(vec, 2, "group.acc");
    i->addIncoming(b.getInt32(0), pre);
    partial->addIncoming(identity, pre);
    Value *next = step(partial, i);
    Value *i1 = b.CreateAdd(i, b.getInt32(1));
    i->addIncoming(i1, b.GetInsertBlock());
    partial->addIncoming(next, b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpSLT(i1, b.getInt32(static_cast<int32_t>(g))), body, exit);
    b.SetInsertPoint(exit);
    acc = next;
  }
  if (n.reduceOp() == ReduceOp::Mean)
    acc = b.CreateFDiv(acc, llvm::ConstantFP::get(vec, static_cast<double>(g)));
  return acc;
}

// Lane k is element (column+k)/g of the operand. A dense packet spans at
// most two runs when g >= W: two scalar loads and a select; else a gather.
Value *PacketEmitter::repeated(const Node &n, Value *column) {
  llvm::IRBuilder<> &b = *scope_->b;
  const int W = plan_.lanes;
  const int64_t g = n.groupSize();
  Value *base = scope_->workspace(plan_.slotOf(n.args[0].get()));
  llvm::Type *vec = llvm::FixedVectorType::get(b.getFloatTy(), W);
  Value *lanes = b.CreateAdd(b.CreateVectorSplat(W, b.CreateTrunc(column, b.getInt32Ty())),
                             laneIds(b.getContext(), W));
  Value *runs = b.CreateUDiv(lanes, b.CreateVectorSplat(W, b.getInt32(static_cast<int32_t>(g))));
  if (mask_ || g < W)
    return gather(base, runs, llvm::Constant::getNullValue(vec));
  counts_.workspace_loads += 2;
  Value *lo = b.CreateUDiv(column, b.getInt64(g));
  Value *hi = b.CreateUDiv(b.CreateAdd(column, b.getInt64(W - 1)), b.getInt64(g));
  auto element = [&](Value *index) {
    return b.CreateVectorSplat(
        W, b.CreateAlignedLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), base, index),
                               llvm::Align(4)));
  };
  Value *inLo = b.CreateICmpEQ(runs, b.CreateVectorSplat(W, b.CreateTrunc(lo, b.getInt32Ty())));
  return b.CreateSelect(inLo, element(lo), element(hi));
}

// Workspace slots hold f32 and i32 packets as they are; booleans as i32.
static llvm::Type *storedType(llvm::LLVMContext &ctx, DType type, int lanes) {
  return valueType(ctx, type == DType::Bool ? DType::I32 : type, lanes);
}

Value *PacketEmitter::lane(const Expr &e, Value *column) {
  if (auto it = values_.find({e.get(), column}); it != values_.end())
    return it->second;
  llvm::IRBuilder<> &b = *scope_->b;
  llvm::LLVMContext &ctx = b.getContext();
  int W = plan_.lanes;
  Value *v = nullptr;
  if (plan_.uniformity.of(e) != analysis::Uniformity::Lane) {
    v = scope_->uniform(e);
  } else if (int slot = plan_.slotOf(e.get()); slot >= 0 && plan_.readsBack(*traversal_, e.get())) {
    Value *ptr = b.CreateInBoundsGEP(b.getFloatTy(), scope_->workspace(slot), column);
    v = memoryLoad(storedType(ctx, e->type, W), ptr, true);
    if (e->type == DType::Bool)
      v = b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  } else if (e->kind == NodeKind::Load) {
    DType storage = plan_.program.inputs[e->param].type;
    Value *index = b.CreateAdd(scope_->dim(e->begin), column);
    Value *ptr = b.CreateInBoundsGEP(memoryType(ctx, storage, 0), scope_->base(e->param), index);
    v = emitWiden(b, memoryLoad(memoryType(ctx, storage, W), ptr, false), storage, &target_.math);
  } else if (e->kind == NodeKind::ColIndex) {
    Value *first = b.CreateTrunc(b.CreateAdd(scope_->dim(e->begin), column), b.getInt32Ty());
    v = b.CreateAdd(b.CreateVectorSplat(W, first), laneIds(ctx, W));
  } else if (e->kind == NodeKind::Slice) {
    // Column j of a slice is column begin + j of its operand (only when
    // eliminate-slices is off; it normally folds slices into loads).
    v = lane(e->args[0], b.CreateAdd(column, scope_->dim(e->begin)));
  } else if (e->kind == NodeKind::Group) {
    v = groupReduce(*e, column);
  } else if (e->kind == NodeKind::Repeat) {
    v = repeated(*e, column);
  } else {
    v = compute(*e, column);
  }
  values_.emplace(std::make_pair(e.get(), column), v);
  return v;
}

std::vector<Value *> PacketEmitter::emitBody(const lower::Traversal &t, lower::PacketKind kind,
                                             Value *column, Value *len, const PacketScope &scope,
                                             bool inRow) {
  scope_ = &scope;
  traversal_ = &t;
  column_ = column;
  values_.clear();
  mask_ = nullptr;
  inRow_ = inRow && kind == lower::PacketKind::Masked && t.bound;
  llvm::IRBuilder<> &b = *scope.b;
  int W = plan_.lanes;
  if (kind == lower::PacketKind::Dense) {
    ++counts_.dense_bodies;
  } else {
    ++counts_.masked_bodies;
    // Active lanes: min(len - column, W), as a compare against lane ids.
    Value *remaining = b.CreateSub(len, column);
    Value *w = b.getInt64(W);
    Value *active = b.CreateSelect(b.CreateICmpSLT(remaining, w), remaining, w);
    mask_ = b.CreateICmpSLT(laneIds(b.getContext(), W),
                            b.CreateVectorSplat(W, b.CreateTrunc(active, b.getInt32Ty())), "mask");
  }

  // Every value first, so every load precedes every store.
  std::vector<Value *> materialized, written, reduced;
  for (const Expr &m : t.materializations)
    materialized.push_back(lane(m, column));
  for (int wi : t.writes)
    written.push_back(lane(plan_.program.writes[wi].value, column));
  for (const Expr &r : t.reductions) {
    Value *v = lane(r->args[0], column);
    if (mask_) // inactive lanes add the identity: same bits as not adding
      v = b.CreateSelect(mask_, v, reductionIdentity(v->getType(), r->reduceOp()));
    reduced.push_back(v);
  }

  for (size_t i = 0; i < t.materializations.size(); ++i) {
    Value *v = materialized[i];
    if (t.materializations[i]->type == DType::Bool)
      v = b.CreateZExt(v, storedType(b.getContext(), DType::Bool, W));
    Value *ptr = b.CreateInBoundsGEP(
        b.getFloatTy(), scope.workspace(plan_.slotOf(t.materializations[i].get())), column);
    memoryStore(v, ptr, true);
  }
  size_t inputs = plan_.program.inputs.size();
  for (size_t i = 0; i < t.writes.size(); ++i) {
    const Write &w = plan_.program.writes[t.writes[i]];
    DType storage = plan_.program.outputs[w.output].type;
    Value *index = b.CreateAdd(scope.dim(w.begin), column);
    Value *ptr = b.CreateInBoundsGEP(memoryType(b.getContext(), storage, 0),
                                     scope.base(int(inputs) + w.output), index);
    Value *stored = emitStored(b, written[i], storage, &target_.math);
    if (inRow_) // the lanes past live hold the fill, as emitFills stores there
      stored = b.CreateSelect(
          mask_, stored, emitStored(b, scope.uniform(t.bound->fills[i]), storage, &target_.math));
    memoryStore(stored, ptr, false);
  }
  scope_ = nullptr;
  inRow_ = false;
  return reduced;
}

llvm::Function *PacketEmitter::emitHelper(const lower::Traversal &t, lower::PacketKind kind,
                                          llvm::Module &module, const std::string &name,
                                          Environment &env) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type *> results;
  for (const Expr &r : t.reductions)
    results.push_back(valueType(ctx, r->args[0]->type, plan_.lanes));
  llvm::Type *ret = results.empty()
                        ? llvm::Type::getVoidTy(ctx)
                        : static_cast<llvm::Type *>(llvm::StructType::get(ctx, results));
  auto *fn = llvm::Function::Create(llvm::FunctionType::get(ret, {ptr, i64, i64}, false),
                                    llvm::Function::InternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoInline);
  ++counts_.helper_functions;

  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::IRBuilder<> pre(entry); // environment loads
  llvm::IRBuilder<> body(ctx);
  auto *bodyBlock = llvm::BasicBlock::Create(ctx, "body", fn);
  body.SetInsertPoint(bodyBlock);
  Value *envPtr = fn->getArg(0);
  // Each value the body asks for gets the next 8-byte environment slot,
  // loaded once at the helper's entry.
  std::unordered_map<std::string, Value *> loaded;
  auto request = [&](const std::string &key, EnvironmentSlot s, llvm::Type *type) -> Value * {
    if (auto it = loaded.find(key); it != loaded.end())
      return it->second;
    Value *v = pre.CreateLoad(type, pre.CreateConstInBoundsGEP1_64(i64, envPtr, env.size()));
    env.push_back(std::move(s));
    return loaded[key] = v;
  };
  PacketScope scope{&body};
  scope.base = [&](int buffer) {
    return request("b" + std::to_string(buffer), {EnvironmentSlot::Base, buffer}, ptr);
  };
  scope.workspace = [&](int s) {
    return request("w" + std::to_string(s), {EnvironmentSlot::Workspace, s}, ptr);
  };
  scope.uniform = [&](const Expr &e) -> Value * {
    std::string key = "u" + std::to_string(reinterpret_cast<uintptr_t>(e.get()));
    if (auto it = loaded.find(key + "splat"); it != loaded.end())
      return it->second;
    llvm::Type *type = valueType(ctx, e->type == DType::Bool ? DType::I32 : e->type, 0);
    Value *v = request(key, {EnvironmentSlot::Uniform, 0, e}, type);
    if (e->type == DType::Bool)
      v = pre.CreateICmpNE(v, pre.getInt32(0));
    return loaded[key + "splat"] = pre.CreateVectorSplat(plan_.lanes, v);
  };
  scope.dim = [&](const Dim &d) {
    return request("d" + d.str(), {EnvironmentSlot::DimValue, 0, Expr(), d}, i64);
  };
  std::vector<Value *> reduced = emitBody(t, kind, fn->getArg(1), fn->getArg(2), scope);
  if (results.empty()) {
    body.CreateRetVoid();
  } else {
    Value *agg = llvm::UndefValue::get(ret);
    for (size_t i = 0; i < reduced.size(); ++i)
      agg = body.CreateInsertValue(agg, reduced[i], {unsigned(i)});
    body.CreateRet(agg);
  }
  pre.CreateBr(bodyBlock);
  return fn;
}

} // namespace lanejit::codegen
