#include "codegen/emit_kernel.h"

#include "codegen/emit_ops.h"
#include "codegen/emit_packet.h"

#include <lanejit/error.h>

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <unordered_map>

namespace lanejit::codegen {
namespace {

using analysis::Uniformity;
using llvm::Value;

class KernelEmitter {
public:
  KernelEmitter(const lower::KernelPlan &plan, llvm::Module &module, const CodegenTarget &target)
      : plan_(plan), program_(plan.program), module_(module), ctx_(module.getContext()),
        target_(target), b_(ctx_), launch_(ctx_), lanes_(plan.lanes),
        packets_(plan, target, counts_) {}

  llvm::Function *emit(const std::string &name, CodegenCounts *counts) {
    name_ = name;
    createFunction(name);
    prepareWorkspace();
    emitRowLoop();
    if (counts)
      *counts = counts_;
    return fn_;
  }

private:
  // ---- function skeleton ------------------------------------------------

  void createFunction(const std::string &name) {
    llvm::Type *ptr = llvm::PointerType::get(ctx_, 0);
    llvm::Type *i64 = b_.getInt64Ty();
    auto *type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64}, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
    fn_->addFnAttr(llvm::Attribute::NoFree);
    applyTargetAttributes(fn_);

    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    Value *args = fn_->getArg(0);
    rowBegin_ = fn_->getArg(1);
    rowEnd_ = fn_->getArg(2);
    args->setName("args");
    rowBegin_->setName("row_begin");
    rowEnd_->setName("row_end");

    // LaunchArgs: {ptr buffers, ptr row_strides, i64 rows, i64 cols, ptr workspace}.
    Value *buffers = b_.CreateLoad(ptr, args, "buffers");
    Value *strides = b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, 8),
                                   "row_strides");
    cols_ = b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, 24), "C");
    workspace_ =
        b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, 32), "workspace");
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

  void applyTargetAttributes(llvm::Function *fn) {
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
  }

  std::string bufferName(size_t i) const {
    return i < program_.inputs.size() ? program_.inputs[i].name
                                      : program_.outputs[i - program_.inputs.size()].name;
  }

  // for (iv = begin; iv < end; ++iv) body(iv); the builder ends after it.
  void emitLoop(Value *begin, Value *end, const char *name,
                const std::function<void(Value *)> &body) {
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
    Value *next = b_.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), std::string(name) + ".next");
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  }

  // if (cond) body(); the builder ends after it.
  void emitIf(Value *cond, const char *name, const std::function<void()> &body) {
    auto *then = llvm::BasicBlock::Create(ctx_, std::string(name) + ".then", fn_);
    auto *done = llvm::BasicBlock::Create(ctx_, std::string(name) + ".done", fn_);
    b_.CreateCondBr(cond, then, done);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  llvm::AllocaInst *entryAlloca(llvm::Type *type, const std::string &name) {
    llvm::IRBuilder<> at(entry_, entry_->begin());
    return at.CreateAlloca(type, nullptr, name);
  }

  // ---- launch- and row-uniform values ------------------------------------

  Value *dimValue(const Dim &d) {
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

  Value *uniform(const Expr &e) {
    if (auto it = uniform_.find(e.get()); it != uniform_.end())
      return it->second;
    bool atLaunch = plan_.uniformity.of(e) == Uniformity::Launch;
    llvm::IRBuilder<> &b = atLaunch ? launch_ : b_;
    Value *v = nullptr;
    switch (e->kind) {
    case NodeKind::Const:
      v = e->type == DType::F32 ? static_cast<Value *>(llvm::ConstantFP::get(b.getFloatTy(), e->value))
          : e->type == DType::I32 ? b.getInt32(static_cast<int32_t>(e->value))
                                  : b.getInt1(e->value != 0);
      break;
    case NodeKind::DimValue:
      v = launch_.CreateTrunc(dimValue(e->begin), b.getInt32Ty());
      break;
    case NodeKind::Load: // a scalar input
      v = launch_.CreateLoad(valueType(ctx_, e->type, 0), bases_.at(e->param),
                             program_.inputs.at(e->param).name);
      break;
    case NodeKind::RowIndex:
      v = b_.CreateTrunc(row_, b_.getInt32Ty(), "r32");
      break;
    case NodeKind::Reduce:
      throw Error(Error::Kind::Compile, "internal: reduction used before its traversal");
    default:
      v = emitOp(b, *e, [&](const Expr &a) { return uniform(a); });
      break;
    }
    uniform_.emplace(e.get(), v);
    return v;
  }

  Value *splatOf(const Expr &e) {
    if (auto it = splat_.find(e.get()); it != splat_.end())
      return it->second;
    bool atLaunch = plan_.uniformity.of(e) == Uniformity::Launch;
    Value *v = (atLaunch ? launch_ : b_).CreateVectorSplat(lanes_, uniform(e));
    splat_.emplace(e.get(), v);
    return v;
  }

  // Computes, at the current row-level point, every uniform operand that
  // the lane expression `e` uses, so packet bodies only read splats. Stops
  // at values read back from the workspace (their operands were needed in
  // the traversal that produced them).
  void prepareUniformOperands(const Expr &e, bool producing,
                              std::unordered_map<const Node *, bool> &seen) {
    if (!seen.emplace(e.get(), true).second)
      return;
    if (plan_.uniformity.of(e) != Uniformity::Lane) {
      splatOf(e);
      return;
    }
    if (!producing && plan_.isMaterialized(e.get()))
      return;
    for (const Expr &a : e->args)
      prepareUniformOperands(a, false, seen);
  }

  template <typename OperandFn>
  Value *emitOp(llvm::IRBuilder<> &b, const Node &n, OperandFn operand) {
    switch (n.kind) {
    case NodeKind::Unary:
      return emitUnary(b, n.unaryOp(), n.args[0]->type, operand(n.args[0]), target_.math);
    case NodeKind::Binary:
      return emitBinary(b, n.binaryOp(), n.args[0]->type, operand(n.args[0]), operand(n.args[1]));
    case NodeKind::Select:
      return b.CreateSelect(operand(n.args[0]), operand(n.args[1]), operand(n.args[2]));
    case NodeKind::Fma:
      return emitFma(b, operand(n.args[0]), operand(n.args[1]), operand(n.args[2]));
    default:
      throw Error(Error::Kind::Compile,
                  "internal: no operation form for node kind " + std::string(name(n.kind)));
    }
  }

  // ---- workspace and alias guards ------------------------------------------

  // Slot k starts at the sum of the rounded sizes of slots before it — the
  // rule lower::workspaceFloats() applies on the host.
  void prepareWorkspace() {
    Value *offset = launch_.getInt64(0);
    for (const Dim &d : plan_.workspaceSlots()) {
      workspaceSlots_.push_back(
          launch_.CreateInBoundsGEP(launch_.getFloatTy(), workspace_, offset, "ws.slot"));
      Value *rounded = launch_.CreateMul(
          launch_.CreateUDiv(launch_.CreateAdd(dimValue(d), launch_.getInt64(lower::kWorkspaceAlign - 1)),
                             launch_.getInt64(lower::kWorkspaceAlign)),
          launch_.getInt64(lower::kWorkspaceAlign));
      offset = launch_.CreateAdd(offset, rounded);
    }
  }

  // For each guarded input: true when it is exactly an output it was not
  // proved safe with (same address and row stride). Addresses and strides
  // are launch-uniform, so a hoisted guard is computed once per call.
  std::vector<Value *> emitGuards(llvm::IRBuilder<> &b) {
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

  // ---- traversals ----------------------------------------------------------

  Value *rowBase(int buffer) {
    bool perRow = buffer >= static_cast<int>(program_.inputs.size()) ||
                  program_.inputs[buffer].kind == ParamKind::RowTensor;
    return perRow ? rowBases_.at(buffer) : bases_.at(buffer);
  }

  PacketScope entryScope() {
    PacketScope scope{&b_};
    scope.base = [this](int buffer) { return rowBase(buffer); };
    scope.workspace = [this](int slot) { return workspaceSlots_.at(slot); };
    scope.uniform = [this](const Expr &e) { return splat_.at(e.get()); };
    scope.dim = [this](const Dim &d) { return dimValue(d); };
    return scope;
  }

  // A helper body for `kind` and the environment the row fills for it.
  struct Helper {
    llvm::Function *fn = nullptr;
    Value *env = nullptr;
  };

  Helper makeHelper(const lower::Traversal &t, int index, lower::PacketKind kind) {
    PacketEmitter::Environment slots;
    std::string name = name_ + ".t" + std::to_string(index) +
                       (kind == lower::PacketKind::Dense ? ".dense" : ".masked");
    Helper h;
    h.fn = packets_.emitHelper(t, kind, module_, name, slots);
    applyTargetAttributes(h.fn);
    h.env = entryAlloca(llvm::ArrayType::get(b_.getInt64Ty(), std::max<size_t>(slots.size(), 1)),
                        name + ".env");
    // Filled once per row, before the traversal's packets.
    for (size_t i = 0; i < slots.size(); ++i) {
      const PacketEmitter::EnvironmentSlot &s = slots[i];
      Value *v = nullptr;
      switch (s.kind) {
      case PacketEmitter::EnvironmentSlot::Base:
        v = rowBase(s.index);
        break;
      case PacketEmitter::EnvironmentSlot::Workspace:
        v = workspaceSlots_.at(s.index);
        break;
      case PacketEmitter::EnvironmentSlot::Uniform:
        v = uniform(s.value);
        if (s.value->type == DType::Bool)
          v = b_.CreateZExt(v, b_.getInt32Ty());
        break;
      case PacketEmitter::EnvironmentSlot::DimValue:
        v = dimValue(s.dim);
        break;
      }
      b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), h.env, i));
    }
    return h;
  }

  // Accumulators of one traversal: accumulators[reduction][k].
  struct TraversalState {
    const lower::Traversal *traversal;
    std::vector<std::vector<llvm::AllocaInst *>> accumulators;
    Helper dense, masked;
  };

  // One packet: its body (inline or a helper call), then its reductions'
  // operands added into accumulator `acc` (a constant index, or an i64
  // chosen at run time for the tail).
  void emitPacket(TraversalState &s, lower::PacketKind kind, Value *column, Value *len,
                  Value *acc) {
    const lower::Traversal &t = *s.traversal;
    std::vector<Value *> reduced;
    if (t.inline_bodies) {
      reduced = packets_.emitBody(t, kind, column, len, entryScope());
    } else {
      Helper &h = kind == lower::PacketKind::Dense ? s.dense : s.masked;
      Value *result = b_.CreateCall(h.fn, {h.env, column, len});
      ++counts_.helper_calls;
      for (size_t i = 0; i < t.reductions.size(); ++i)
        reduced.push_back(b_.CreateExtractValue(result, {unsigned(i)}));
    }
    for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
      ReduceOp op = t.reductions[ri]->reduceOp();
      Value *v = reduced[ri];
      llvm::Type *type = v->getType();
      auto &accs = s.accumulators[ri];
      if (auto *k = llvm::dyn_cast<llvm::ConstantInt>(acc)) {
        llvm::AllocaInst *slot = accs[k->getZExtValue()];
        b_.CreateStore(emitReductionStep(b_, op, b_.CreateLoad(type, slot), v), slot);
        continue;
      }
      for (size_t k = 0; k < accs.size(); ++k) {
        Value *old = b_.CreateLoad(type, accs[k]);
        Value *updated = emitReductionStep(b_, op, old, v);
        b_.CreateStore(b_.CreateSelect(b_.CreateICmpEQ(acc, b_.getInt64(k)), updated, old),
                       accs[k]);
      }
    }
  }

  // Fixed halving tree over the kReductionLanes virtual lanes: first across
  // accumulators (k with k + K/2), then inside the packet (lane i with
  // i + width/2). The same tree for every W, so the same bits.
  Value *combine(ReduceOp op, std::vector<Value *> accs) {
    while (accs.size() > 1) {
      size_t half = accs.size() / 2;
      for (size_t k = 0; k < half; ++k)
        accs[k] = emitReductionStep(b_, op, accs[k], accs[k + half]);
      accs.resize(half);
    }
    Value *v = accs[0];
    for (int width = lanes_; width > 1; width /= 2) {
      std::vector<int> lo, hi;
      for (int i = 0; i < width / 2; ++i) {
        lo.push_back(i);
        hi.push_back(i + width / 2);
      }
      v = emitReductionStep(b_, op, b_.CreateShuffleVector(v, lo), b_.CreateShuffleVector(v, hi));
    }
    return b_.CreateExtractElement(v, uint64_t(0));
  }

  void emitTraversal(const lower::Traversal &t, int index) {
    std::unordered_map<const Node *, bool> seen;
    for (const Expr &m : t.materializations)
      prepareUniformOperands(m, true, seen);
    for (int wi : t.writes)
      prepareUniformOperands(program_.writes[wi].value, false, seen);
    for (const Expr &r : t.reductions)
      prepareUniformOperands(r->args[0], false, seen);
    if (t.bound)
      for (const Expr &fill : t.bound->fills)
        splatOf(fill);

    TraversalState s{&t};
    if (!t.inline_bodies) {
      if (t.full == lower::PacketKind::Dense)
        s.dense = makeHelper(t, index, lower::PacketKind::Dense);
      s.masked = makeHelper(t, index, lower::PacketKind::Masked);
    }
    int K = t.reductions.empty() ? 1 : plan_.accumulators;
    for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
      llvm::Type *type = valueType(ctx_, t.reductions[ri]->args[0]->type, lanes_);
      s.accumulators.emplace_back();
      for (int k = 0; k < K; ++k) {
        auto *slot = entryAlloca(type, "acc" + std::to_string(index) + "." + std::to_string(ri) +
                                           "." + std::to_string(k));
        b_.CreateStore(reductionIdentity(type, t.reductions[ri]->reduceOp()), slot);
        s.accumulators.back().push_back(slot);
      }
    }

    Value *len = dimValue(t.len);
    // Packets cover [0, live): all of len, or up to the column bound. A
    // bound is row-uniform, so the packet counts are then computed per row.
    Value *live = t.bound ? liveColumns(*t.bound, len) : len;
    llvm::IRBuilder<> &counts = t.bound ? b_ : launch_;
    Value *full = counts.CreateUDiv(live, counts.getInt64(lanes_), "full_packets");
    Value *tail = counts.CreateURem(live, counts.getInt64(lanes_), "tail_lanes");
    Value *groups = counts.CreateUDiv(full, counts.getInt64(K));
    Value *rest = counts.CreateURem(full, counts.getInt64(K));
    lower::PacketKind fullKind = t.full;
    auto columnOf = [&](Value *packet) { return b_.CreateMul(packet, b_.getInt64(lanes_)); };

    emitLoop(b_.getInt64(0), groups, "packets", [&](Value *g) {
      for (int k = 0; k < K; ++k) {
        Value *packet = b_.CreateAdd(b_.CreateMul(g, b_.getInt64(K)), b_.getInt64(k));
        emitPacket(s, fullKind, columnOf(packet), live, b_.getInt64(k));
      }
    });
    // Full packets left over after the groups of K go to accumulators 0..rest-1.
    for (int k = 0; k + 1 < K; ++k) {
      emitIf(b_.CreateICmpSGT(rest, b_.getInt64(k)), "rest", [&] {
        Value *packet = b_.CreateAdd(b_.CreateMul(groups, b_.getInt64(K)), b_.getInt64(k));
        emitPacket(s, fullKind, columnOf(packet), live, b_.getInt64(k));
      });
    }
    // The tail packet is packet number `full`, so its accumulator is `rest`.
    emitIf(b_.CreateICmpNE(tail, b_.getInt64(0)), "tail", [&] {
      emitPacket(s, lower::PacketKind::Masked, columnOf(full), live,
                 K == 1 ? b_.getInt64(0) : rest);
    });
    if (t.bound)
      emitFills(t, live, len);

    for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
      const Expr &r = t.reductions[ri];
      llvm::Type *type = valueType(ctx_, r->args[0]->type, lanes_);
      std::vector<Value *> accs;
      for (llvm::AllocaInst *slot : s.accumulators[ri])
        accs.push_back(b_.CreateLoad(type, slot));
      Value *v = combine(r->reduceOp(), accs);
      if (r->reduceOp() == ReduceOp::Mean)
        v = b_.CreateFDiv(v, b_.CreateSIToFP(len, b_.getFloatTy()));
      uniform_[r.get()] = v;
    }
  }

  // live = clamp(limit - col_begin (+1), 0, len), per row.
  Value *liveColumns(const lower::ColumnBound &bound, Value *len) {
    Value *limit = b_.CreateSExt(uniform(bound.limit), b_.getInt64Ty());
    Value *live = b_.CreateSub(limit, dimValue(bound.col_begin));
    if (bound.inclusive)
      live = b_.CreateAdd(live, b_.getInt64(1));
    live = b_.CreateSelect(b_.CreateICmpSLT(live, b_.getInt64(0)), b_.getInt64(0), live);
    return b_.CreateSelect(b_.CreateICmpSGT(live, len), len, live, "live_columns");
  }

  // Columns [live, len) of a bounded traversal's writes get the row-uniform
  // value the select chose there: full packets, then a masked tail.
  void emitFills(const lower::Traversal &t, Value *live, Value *len) {
    size_t inputs = program_.inputs.size();
    Value *count = b_.CreateSub(len, live);
    Value *packets = b_.CreateUDiv(count, b_.getInt64(lanes_));
    Value *left = b_.CreateURem(count, b_.getInt64(lanes_));
    auto store = [&](Value *column, Value *mask) {
      for (size_t i = 0; i < t.writes.size(); ++i) {
        const Write &w = program_.writes[t.writes[i]];
        Value *value = splatOf(t.bound->fills[i]);
        Value *index = b_.CreateAdd(dimValue(w.begin), column);
        Value *ptr = b_.CreateInBoundsGEP(b_.getFloatTy(), rowBase(int(inputs) + w.output), index);
        if (mask)
          b_.CreateMaskedStore(value, ptr, llvm::Align(4), mask);
        else
          b_.CreateAlignedStore(value, ptr, llvm::Align(4));
      }
    };
    emitLoop(b_.getInt64(0), packets, "fill", [&](Value *p) {
      store(b_.CreateAdd(live, b_.CreateMul(p, b_.getInt64(lanes_))), nullptr);
    });
    emitIf(b_.CreateICmpNE(left, b_.getInt64(0)), "fill.tail", [&] {
      Value *column = b_.CreateAdd(live, b_.CreateMul(packets, b_.getInt64(lanes_)));
      Value *mask = b_.CreateICmpSLT(
          laneIds(ctx_, lanes_), b_.CreateVectorSplat(lanes_, b_.CreateTrunc(left, b_.getInt32Ty())));
      store(column, mask);
    });
  }

  void emitRowLoop() {
    launchEnd_->eraseFromParent();
    b_.SetInsertPoint(entry_);
    llvm::BasicBlock *rows = llvm::BasicBlock::Create(ctx_, "rows", fn_);
    b_.CreateBr(rows);
    // Launch values are inserted before the entry's branch from here on.
    launch_.SetInsertPoint(entry_->getTerminator());
    std::vector<Value *> hoisted;
    if (plan_.hoist_guards)
      hoisted = emitGuards(launch_);
    b_.SetInsertPoint(rows);
    emitLoop(rowBegin_, rowEnd_, "row", [&](Value *r) {
      row_ = r;
      rowBases_.clear();
      for (size_t i = 0; i < bases_.size(); ++i)
        rowBases_.push_back(b_.CreateInBoundsGEP(b_.getFloatTy(), bases_[i],
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
          Value *bytes = b_.CreateMul(dimValue(program_.inputs[input].cols), b_.getInt64(4));
          b_.CreateMemCpy(copy, llvm::MaybeAlign(4), original, llvm::MaybeAlign(4), bytes);
        });
        rowBases_[input] = b_.CreateSelect(staged[g], copy, original, bufferName(input) + ".read");
      }
      for (size_t t = 0; t < plan_.traversals.size(); ++t)
        emitTraversal(plan_.traversals[t], static_cast<int>(t));
      // Row-uniform values are only valid inside this row's iteration.
      forgetRowValues();
    });
    b_.CreateRetVoid();
  }

  void forgetRowValues() {
    for (auto *m : {&uniform_, &splat_})
      for (auto it = m->begin(); it != m->end();)
        it = plan_.uniformity.of(it->first) == Uniformity::Launch ? std::next(it) : m->erase(it);
  }

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
  Value *rowBegin_ = nullptr, *rowEnd_ = nullptr, *cols_ = nullptr, *row_ = nullptr;
  Value *workspace_ = nullptr;
  std::vector<Value *> bases_, strides_, rowBases_, workspaceSlots_;
  std::string name_;
  std::map<std::string, Value *> dims_;
  std::unordered_map<const Node *, Value *> uniform_, splat_;
  CodegenCounts counts_;
  PacketEmitter packets_; // after counts_, which it updates
};

} // namespace

llvm::Function *emitKernel(const lower::KernelPlan &plan, llvm::Module &module,
                           const CodegenTarget &target, const std::string &entryName,
                           CodegenCounts *counts) {
  return KernelEmitter(plan, module, target).emit(entryName, counts);
}

} // namespace lanejit::codegen
