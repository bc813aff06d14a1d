#include "codegen/kernel_emitter.h"

#include "codegen/emit_ops.h"

#include <lanejit/error.h>
#include <lanejit/launch_abi.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <cstddef>

namespace lanejit::codegen {

using analysis::Uniformity;
using llvm::Value;

llvm::Function *KernelEmitter::emit(const std::string &name, CodegenCounts *counts,
                                    std::optional<int64_t> fixedCols) {
  name_ = name;
  fixedCols_ = fixedCols;
  createFunction(name);
  prepareWorkspace();
  emitRowLoop();
  if (counts)
    *counts = counts_;
  return fn_;
}

void KernelEmitter::createFunction(const std::string &name) {
  llvm::Type *ptr = llvm::PointerType::get(ctx_, 0);
  llvm::Type *i64 = b_.getInt64Ty();
  auto *type = part_ ? llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false)
                     : llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
  fn_->addFnAttr(llvm::Attribute::NoFree);
  applyTargetAttributes(fn_);

  entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(entry_);
  Value *args = fn_->getArg(0);
  args->setName("args");
  auto fieldOf = [&](Value *base, llvm::Type *type, size_t offset, const char *name) {
    return b_.CreateLoad(type, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, offset), name);
  };
  if (part_) {
    // The fields of lower::PartArgs: one row, one phase, a chunk range.
    Value *part = fn_->getArg(1);
    part->setName("part");
    rowBegin_ = fieldOf(part, i64, offsetof(lower::PartArgs, row), "row");
    rowEnd_ = b_.CreateAdd(rowBegin_, b_.getInt64(1));
    phase_ = fieldOf(part, i64, offsetof(lower::PartArgs, phase), "phase");
    chunkBegin_ = fieldOf(part, i64, offsetof(lower::PartArgs, chunk_begin), "chunk_begin");
    chunkEnd_ = fieldOf(part, i64, offsetof(lower::PartArgs, chunk_end), "chunk_end");
    partials_ = fieldOf(part, ptr, offsetof(lower::PartArgs, partials), "partials");
    partialChunks_ =
        fieldOf(part, i64, offsetof(lower::PartArgs, partial_chunks), "partial_chunks");
  } else {
    rowBegin_ = fn_->getArg(1);
    rowEnd_ = fn_->getArg(2);
    rowBegin_->setName("row_begin");
    rowEnd_->setName("row_end");
  }

  // The fields of lanejit_launch_args (lanejit/launch_abi.h), at its offsets.
  auto field = [&](llvm::Type *type, size_t offset, const char *name) {
    return fieldOf(args, type, offset, name);
  };
  Value *buffers = field(ptr, offsetof(lanejit_launch_args, buffers), "buffers");
  Value *strides = field(ptr, offsetof(lanejit_launch_args, row_strides), "row_strides");
  rows_ = field(i64, offsetof(lanejit_launch_args, rows), "R");
  cols_ = fixedCols_ ? static_cast<Value *>(b_.getInt64(*fixedCols_))
                     : field(i64, offsetof(lanejit_launch_args, cols), "C");
  workspace_ = field(ptr, offsetof(lanejit_launch_args, workspace), "workspace");
  size_t count = program_.inputs.size() + program_.outputs.size();
  for (size_t i = 0; i < count; ++i) {
    std::string n = bufferName(i);
    bases_.push_back(b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, buffers, i), n));
    strides_.push_back(
        b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, strides, i), n + ".stride"));
  }
  // Launch-uniform values go before the entry's terminator, added last.
  launchEnd_ = b_.CreateUnreachable();
  launch_.SetInsertPoint(launchEnd_);
}

void KernelEmitter::applyTargetAttributes(llvm::Function *fn) {
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  if (!target_.cpu.empty())
    fn->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty())
    fn->addFnAttr("target-features", target_.features);
  // Explicit packet types must stay whole registers (x86 may otherwise
  // split 512-bit vectors into two 256-bit halves).
  std::string width = std::to_string(lanes_ * 32);
  fn->addFnAttr("min-legal-vector-width", width);
  fn->addFnAttr("prefer-vector-width", width);
  // Fills (masked softmax's zeros past the last valid column) stay vector
  // stores: LLVM would otherwise make a loop of them a memset call per row.
  if (plan_.fill_stores)
    fn->addFnAttr("no-builtin-memset");
}

void KernelEmitter::emitLoop(Value *begin, Value *end, const char *name,
                             const std::function<void(Value *)> &body) {
  // Bounds known here (an entry compiled for its C) leave no loop to emit
  // for zero or one iteration: less IR for LLVM to fold away.
  auto *first = llvm::dyn_cast<llvm::ConstantInt>(begin);
  auto *last = llvm::dyn_cast<llvm::ConstantInt>(end);
  if (first && last && last->getSExtValue() <= first->getSExtValue() + 1) {
    if (last->getSExtValue() > first->getSExtValue())
      body(begin);
    return;
  }
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *header = llvm::BasicBlock::Create(ctx_, std::string(name) + ".header", fn_);
  auto *bodyBlock = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode *iv = b_.CreatePHI(begin->getType(), 2, name);
  iv->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(iv, end), bodyBlock, exit);
  b_.SetInsertPoint(bodyBlock);
  body(iv);
  Value *next =
      b_.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), std::string(name) + ".next");
  iv->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst *latch = b_.CreateBr(header);
  // The plan already unrolled what pays (K packets per group); LLVM's
  // unroller copied bodies again: 2-3x the compile time of LayerNorm,
  // RMSNorm and masked softmax at W = 8, for no measured speed.
  llvm::LLVMContext &c = ctx_;
  llvm::MDNode *disable =
      llvm::MDNode::get(c, {llvm::MDString::get(c, "llvm.loop.unroll.disable")});
  llvm::TempMDTuple placeholder = llvm::MDNode::getTemporary(c, {});
  llvm::MDNode *loop = llvm::MDNode::getDistinct(c, {placeholder.get(), disable});
  loop->replaceOperandWith(0, loop);
  if (!plan_.llvm_loop_unroll)
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
  b_.SetInsertPoint(exit);
}

void KernelEmitter::emitIfElse(Value *cond, const char *name, const std::function<void()> &then,
                               const std::function<void()> &otherwise) {
  if (auto *known = llvm::dyn_cast<llvm::ConstantInt>(cond))
    return known->isOne() ? then() : otherwise();
  auto *thenBlock = llvm::BasicBlock::Create(ctx_, std::string(name) + ".then", fn_);
  auto *elseBlock = llvm::BasicBlock::Create(ctx_, std::string(name) + ".else", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, std::string(name) + ".done", fn_);
  b_.CreateCondBr(cond, thenBlock, elseBlock);
  b_.SetInsertPoint(thenBlock);
  then();
  b_.CreateBr(done);
  b_.SetInsertPoint(elseBlock);
  otherwise();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void KernelEmitter::emitIf(Value *cond, const char *name, const std::function<void()> &body,
                           bool unlikely) {
  if (auto *known = llvm::dyn_cast<llvm::ConstantInt>(cond)) {
    if (known->isOne())
      body();
    return;
  }
  auto *then = llvm::BasicBlock::Create(ctx_, std::string(name) + ".then", fn_);
  auto *done = llvm::BasicBlock::Create(ctx_, std::string(name) + ".done", fn_);
  llvm::MDNode *weights =
      unlikely ? llvm::MDBuilder(ctx_).createBranchWeights(1, 1 << 20) : nullptr;
  b_.CreateCondBr(cond, then, done, weights);
  b_.SetInsertPoint(then);
  body();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

llvm::AllocaInst *KernelEmitter::entryAlloca(llvm::Type *type, const std::string &name) {
  llvm::IRBuilder<> at(entry_, entry_->begin());
  return at.CreateAlloca(type, nullptr, name);
}

Value *KernelEmitter::dimValue(const Dim &d) {
  std::string key = d.str();
  if (auto it = dims_.find(key); it != dims_.end())
    return it->second;
  // (a*C + b) / d; the binder guarantees it is a non-negative integer.
  Value *v = launch_.CreateAdd(launch_.CreateMul(cols_, launch_.getInt64(d.coeff())),
                               launch_.getInt64(d.offset()));
  if (d.denom() != 1)
    v = launch_.CreateSDiv(v, launch_.getInt64(d.denom()));
  dims_.emplace(key, v);
  return v;
}

Value *KernelEmitter::uniform(const Expr &e) {
  if (auto it = uniform_.find(e.get()); it != uniform_.end())
    return it->second;
  bool atLaunch = plan_.uniformity.of(e) == Uniformity::Launch;
  llvm::IRBuilder<> &b = atLaunch ? launch_ : b_;
  Value *v = nullptr;
  switch (e->kind) {
  case NodeKind::Const:
    v = e->type == DType::F32
            ? static_cast<Value *>(llvm::ConstantFP::get(b.getFloatTy(), e->value))
        : e->type == DType::I32 ? b.getInt32(static_cast<int32_t>(e->value))
                                : b.getInt1(e->value != 0);
    break;
  case NodeKind::DimValue: v = launch_.CreateTrunc(dimValue(e->begin), b.getInt32Ty()); break;
  case NodeKind::Load: { // a scalar input
    DType storage = program_.inputs.at(e->param).type;
    v = emitWiden(launch_,
                  launch_.CreateLoad(memoryType(ctx_, storage, 0), bases_.at(e->param),
                                     program_.inputs.at(e->param).name),
                  storage, &target_.math);
  } break;
  case NodeKind::RowIndex: v = b_.CreateTrunc(row_, b_.getInt32Ty(), "r32"); break;
  case NodeKind::Reduce:
    throw Error(Error::Kind::Compile, "internal: reduction used before its traversal");
  default: {
    std::vector<Value *> operands;
    for (const Expr &a : e->args)
      operands.push_back(uniform(a));
    v = emitElementwise(b, *e, operands, target_.math);
  } break;
  }
  uniform_.emplace(e.get(), v);
  return v;
}

Value *KernelEmitter::splatOf(const Expr &e) {
  if (auto it = splat_.find(e.get()); it != splat_.end())
    return it->second;
  bool atLaunch = plan_.uniformity.of(e) == Uniformity::Launch;
  Value *v = (atLaunch ? launch_ : b_).CreateVectorSplat(lanes_, uniform(e));
  splat_.emplace(e.get(), v);
  return v;
}

void KernelEmitter::prepareUniformOperands(const lower::Traversal &t) {
  for (const Expr &root : lower::rootsOf(plan_, t))
    if (plan_.uniformity.of(root) != Uniformity::Lane)
      splatOf(root); // a row-uniform value written across the row
  for (const Expr &e : lower::laneValuesOf(plan_, t))
    if (!plan_.readsBack(t, e.get()))
      for (const Expr &a : e->args)
        if (plan_.uniformity.of(a) != Uniformity::Lane)
          splatOf(a);
  if (t.bound)
    for (const Expr &fill : t.bound->fills)
      splatOf(fill);
}

void KernelEmitter::prepareWorkspace() {
  Value *offset = launch_.getInt64(0);
  for (const Dim &d : plan_.workspaceSlots()) {
    workspaceSlots_.push_back(
        launch_.CreateInBoundsGEP(launch_.getFloatTy(), workspace_, offset, "ws.slot"));
    Value *rounded = launch_.CreateMul(
        launch_.CreateUDiv(
            launch_.CreateAdd(dimValue(d), launch_.getInt64(lower::kWorkspaceAlign - 1)),
            launch_.getInt64(lower::kWorkspaceAlign)),
        launch_.getInt64(lower::kWorkspaceAlign));
    offset = launch_.CreateAdd(offset, rounded);
  }
}

std::vector<Value *> KernelEmitter::emitGuards(llvm::IRBuilder<> &b) {
  std::vector<Value *> staged;
  for (int input : plan_.guardedInputs()) {
    Value *any = b.getFalse();
    for (const lower::AliasPair &p : plan_.alias) {
      if (p.input != input || p.handling != lower::AliasHandling::GuardedRowStaging)
        continue;
      size_t out = program_.inputs.size() + p.output;
      Value *same = b.CreateAnd(b.CreateICmpEQ(bases_[input], bases_[out]),
                                b.CreateICmpEQ(strides_[input], strides_[out]));
      any = b.CreateOr(any, same, "alias.guard." + bufferName(input) + "." + bufferName(out));
      ++counts_.guards;
      counts_.guards_hoisted += plan_.hoist_guards;
    }
    staged.push_back(any);
  }
  return staged;
}

void KernelEmitter::emitRowLoop() {
  launchEnd_->eraseFromParent();
  b_.SetInsertPoint(entry_);
  llvm::BasicBlock *rows = llvm::BasicBlock::Create(ctx_, "rows", fn_);
  b_.CreateBr(rows);
  // Launch values are inserted before the entry's branch from here on.
  launch_.SetInsertPoint(entry_->getTerminator());
  std::vector<Value *> hoisted;
  if (plan_.hoist_guards)
    hoisted = emitGuards(launch_);
  Value *rowEnd = rowEnd_;
  if (plan_.flatten_rows)
    rowEnd = flattenRows();
  b_.SetInsertPoint(rows);
  emitLoop(rowBegin_, rowEnd, "row", [&](Value *r) {
    row_ = r;
    rowBases_.clear();
    for (size_t i = 0; i < bases_.size(); ++i)
      rowBases_.push_back(b_.CreateInBoundsGEP(elementType(i), bases_[i],
                                               b_.CreateMul(r, strides_[i]),
                                               bufferName(i) + ".row"));
    // An input exactly aliased with an output it was not proved safe
    // with is read from a copy of its row, taken before any write.
    std::vector<int> guarded = plan_.guardedInputs();
    std::vector<Value *> staged = plan_.hoist_guards ? hoisted : emitGuards(b_);
    for (size_t g = 0; g < guarded.size(); ++g) {
      int input = guarded[g];
      Value *copy = workspaceSlots_.at(plan_.materialized.size() + g);
      Value *original = rowBases_[input];
      emitIf(staged[g], "stage", [&] {
        const Param &decl = program_.inputs[input];
        Value *bytes = b_.CreateMul(dimValue(decl.cols), b_.getInt64(bytesOf(decl.type)));
        b_.CreateMemCpy(copy, llvm::MaybeAlign(4), original, elementAlign(elementType(input)),
                        bytes);
      });
      rowBases_[input] = b_.CreateSelect(staged[g], copy, original, bufferName(input) + ".read");
    }
    for (size_t t = 0; t < plan_.traversals.size(); ++t)
      emitTraversal(plan_.traversals[t], static_cast<int>(t));
    // Row-uniform values are only valid inside this row's iteration.
    forgetRowValues();
  });
  // Streaming stores are weakly ordered: fence them before the caller
  // reads the rows (x86's sfence; elsewhere a release fence, AArch64's dmb).
  if (streams() && target_.x86)
    b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  else if (streams())
    b_.CreateFence(llvm::AtomicOrdering::Release);
  b_.CreateRetVoid();
}

llvm::Function *KernelEmitter::emitPart(const std::string &name) {
  name_ = name;
  part_ = true;
  createFunction(name);
  prepareWorkspace();
  launchEnd_->eraseFromParent();
  b_.SetInsertPoint(entry_);
  llvm::BasicBlock *rowBlock = llvm::BasicBlock::Create(ctx_, "row", fn_);
  b_.CreateBr(rowBlock);
  launch_.SetInsertPoint(entry_->getTerminator());
  b_.SetInsertPoint(rowBlock);
  // The runtime splits columns only when no output overlaps an input, so
  // no row is staged here (launch/column_split.cpp).
  row_ = rowBegin_;
  for (size_t i = 0; i < bases_.size(); ++i)
    rowBases_.push_back(b_.CreateInBoundsGEP(elementType(i), bases_[i],
                                             b_.CreateMul(row_, strides_[i]),
                                             bufferName(i) + ".row"));
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done", fn_);
  auto *phases = b_.CreateSwitch(phase_, done, unsigned(plan_.traversals.size()));
  std::vector<int> firstSlot;
  int slots = 0;
  for (const lower::Traversal &t : plan_.traversals) {
    firstSlot.push_back(slots);
    slots += static_cast<int>(t.reductions.size());
  }
  for (size_t t = 0; t < plan_.traversals.size(); ++t) {
    llvm::BasicBlock *phase = llvm::BasicBlock::Create(ctx_, "phase" + std::to_string(t), fn_);
    phases->addCase(b_.getInt64(t), phase);
    b_.SetInsertPoint(phase);
    for (size_t earlier = 0; earlier < t; ++earlier)
      if (!plan_.traversals[earlier].reductions.empty())
        finishFromPartials(plan_.traversals[earlier], firstSlot[earlier]);
    partSlot_ = firstSlot[t];
    emitTraversal(plan_.traversals[t], static_cast<int>(t));
    b_.CreateBr(done);
    forgetRowValues();
  }
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
  return fn_;
}

Value *KernelEmitter::flattenRows() {
  // Dense: every row tensor's row r + 1 starts where row r ends, so rows
  // [begin, end) are one row of (end - begin) x width columns starting at
  // row begin (width: the traversal's length, C or a fixed number). Checked
  // once per call; otherwise the loop runs row by row.
  Value *width = dimValue(plan_.traversals.at(0).len);
  Value *dense = launch_.CreateICmpSGT(rowEnd_, rowBegin_);
  for (size_t i = 0; i < bases_.size(); ++i) {
    bool rowTensor = i >= program_.inputs.size() || program_.inputs[i].kind == ParamKind::RowTensor;
    if (rowTensor)
      dense = launch_.CreateAnd(dense, launch_.CreateICmpEQ(strides_[i], width));
  }
  dense->setName("rows.dense");
  Value *flat = launch_.CreateMul(launch_.CreateSub(rowEnd_, rowBegin_), width);
  flatLen_ = launch_.CreateSelect(dense, flat, width, "row.len");
  return launch_.CreateSelect(dense, launch_.CreateAdd(rowBegin_, launch_.getInt64(1)), rowEnd_,
                              "row_end.flat");
}

void KernelEmitter::forgetRowValues() {
  for (auto *m : {&uniform_, &splat_})
    for (auto it = m->begin(); it != m->end();)
      it = plan_.uniformity.of(it->first) == Uniformity::Launch ? std::next(it) : m->erase(it);
}

llvm::Function *emitKernel(const lower::KernelPlan &plan, llvm::Module &module,
                           const CodegenTarget &target, const std::string &entryName,
                           CodegenCounts *counts, std::optional<int64_t> fixedCols) {
  return KernelEmitter(plan, module, target).emit(entryName, counts, fixedCols);
}

llvm::Function *emitPartKernel(const lower::KernelPlan &plan, llvm::Module &module,
                               const CodegenTarget &target, const std::string &name) {
  return KernelEmitter(plan, module, target).emitPart(name);
}

} // namespace lanejit::codegen
