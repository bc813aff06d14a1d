#include "codegen/emit_kernel.h"

#include "codegen/emit_ops.h"

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

// Where one packet sits and how it is masked.
struct PacketContext {
  lower::PacketKind kind;
  Value *column = nullptr; // i64: first column of the packet within [0, len)
  Value *mask = nullptr;   // <W x i1>, Masked only
  std::unordered_map<const Node *, Value *> values;
};

class KernelEmitter {
public:
  KernelEmitter(const lower::KernelPlan &plan, llvm::Module &module, const CodegenTarget &target)
      : plan_(plan), program_(plan.program), module_(module), ctx_(module.getContext()),
        target_(target), b_(ctx_), launch_(ctx_), lanes_(plan.lanes) {}

  llvm::Function *emit(const std::string &name, CodegenCounts *counts) {
    createFunction(name);
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
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addFnAttr(llvm::Attribute::NoFree);
    if (!target_.cpu.empty())
      fn_->addFnAttr("target-cpu", target_.cpu);
    if (!target_.features.empty())
      fn_->addFnAttr("target-features", target_.features);
    // Explicit packet types must stay whole registers (x86 may otherwise
    // split 512-bit vectors into two 256-bit halves).
    std::string width = std::to_string(lanes_ * 32);
    fn_->addFnAttr("min-legal-vector-width", width);
    fn_->addFnAttr("prefer-vector-width", width);

    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    Value *args = fn_->getArg(0);
    rowBegin_ = fn_->getArg(1);
    rowEnd_ = fn_->getArg(2);
    args->setName("args");
    rowBegin_->setName("row_begin");
    rowEnd_->setName("row_end");

    // LaunchArgs: {ptr buffers, ptr row_strides, i64 rows, i64 cols}.
    Value *buffers = b_.CreateLoad(ptr, args, "buffers");
    Value *strides = b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, 8),
                                   "row_strides");
    cols_ = b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), args, 24), "C");
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
  // the lane expression `e` uses, so packet bodies only read splats.
  void prepareUniformOperands(const Expr &e, std::unordered_map<const Node *, bool> &seen) {
    if (!seen.emplace(e.get(), true).second)
      return;
    if (plan_.uniformity.of(e) != Uniformity::Lane) {
      splatOf(e);
      return;
    }
    for (const Expr &a : e->args)
      prepareUniformOperands(a, seen);
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

  // ---- packets -----------------------------------------------------------

  Value *lanePointer(int buffer, const Dim &begin, Value *column) {
    Value *index = b_.CreateAdd(dimValue(begin), column);
    bool perRow = buffer >= static_cast<int>(program_.inputs.size()) ||
                  program_.inputs[buffer].kind == ParamKind::RowTensor;
    Value *base = perRow ? rowBases_.at(buffer) : bases_.at(buffer);
    return b_.CreateInBoundsGEP(b_.getFloatTy(), base, index);
  }

  Value *iota32() {
    std::vector<llvm::Constant *> lanes;
    for (int i = 0; i < lanes_; ++i)
      lanes.push_back(b_.getInt32(i));
    return llvm::ConstantVector::get(lanes);
  }

  Value *lane(const Expr &e, PacketContext &p) {
    if (auto it = p.values.find(e.get()); it != p.values.end())
      return it->second;
    Value *v = nullptr;
    if (plan_.uniformity.of(e) != Uniformity::Lane) {
      v = splat_.at(e.get());
    } else if (e->kind == NodeKind::Load) {
      llvm::Type *type = valueType(ctx_, e->type, lanes_);
      Value *ptr = lanePointer(e->param, e->begin, p.column);
      if (p.kind == lower::PacketKind::Dense)
        v = b_.CreateAlignedLoad(type, ptr, llvm::Align(4));
      else
        v = b_.CreateMaskedLoad(type, ptr, llvm::Align(4), p.mask,
                                llvm::Constant::getNullValue(type));
    } else if (e->kind == NodeKind::ColIndex) {
      Value *first = b_.CreateTrunc(b_.CreateAdd(dimValue(e->begin), p.column), b_.getInt32Ty());
      v = b_.CreateAdd(b_.CreateVectorSplat(lanes_, first), iota32());
    } else {
      v = emitOp(b_, *e, [&](const Expr &a) { return lane(a, p); });
    }
    p.values.emplace(e.get(), v);
    return v;
  }

  // Accumulators of one traversal: accumulators_[reduction][k].
  struct TraversalState {
    const lower::Traversal *traversal;
    std::vector<std::vector<llvm::AllocaInst *>> accumulators;
  };

  // One packet: stores its writes and adds into accumulator `acc` (a
  // constant index, or an i64 chosen at run time for the tail).
  void emitPacket(TraversalState &s, lower::PacketKind kind, Value *column, Value *len,
                  Value *acc) {
    PacketContext p{kind, column};
    if (kind == lower::PacketKind::Dense) {
      ++counts_.dense_bodies;
    } else {
      ++counts_.masked_bodies;
      // Active lanes: min(len - column, W), as a compare against lane ids.
      Value *remaining = b_.CreateSub(len, column);
      Value *w = b_.getInt64(lanes_);
      Value *active = b_.CreateSelect(b_.CreateICmpSLT(remaining, w), remaining, w);
      p.mask = b_.CreateICmpSLT(iota32(),
                                b_.CreateVectorSplat(lanes_, b_.CreateTrunc(active, b_.getInt32Ty())),
                                "mask");
    }
    for (int wi : s.traversal->writes) {
      const Write &w = program_.writes[wi];
      Value *value = lane(w.value, p);
      int buffer = static_cast<int>(program_.inputs.size()) + w.output;
      Value *ptr = lanePointer(buffer, w.begin, column);
      if (kind == lower::PacketKind::Dense)
        b_.CreateAlignedStore(value, ptr, llvm::Align(4));
      else
        b_.CreateMaskedStore(value, ptr, llvm::Align(4), p.mask);
    }
    for (size_t ri = 0; ri < s.traversal->reductions.size(); ++ri) {
      const Expr &reduction = s.traversal->reductions[ri];
      ReduceOp op = reduction->reduceOp();
      Value *v = lane(reduction->args[0], p);
      llvm::Type *type = v->getType();
      if (p.mask) // inactive lanes add the identity: same bits as not adding
        v = b_.CreateSelect(p.mask, v, reductionIdentity(type, op));
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
    for (int wi : t.writes)
      prepareUniformOperands(program_.writes[wi].value, seen);
    for (const Expr &r : t.reductions)
      prepareUniformOperands(r->args[0], seen);

    TraversalState s{&t};
    llvm::Type *vf = valueType(ctx_, DType::F32, lanes_);
    int K = t.reductions.empty() ? 1 : plan_.accumulators;
    for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
      s.accumulators.emplace_back();
      for (int k = 0; k < K; ++k) {
        auto *slot = entryAlloca(vf, "acc" + std::to_string(index) + "." + std::to_string(ri) +
                                         "." + std::to_string(k));
        b_.CreateStore(reductionIdentity(vf, t.reductions[ri]->reduceOp()), slot);
        s.accumulators.back().push_back(slot);
      }
    }

    Value *len = dimValue(t.len);
    Value *full = launch_.CreateUDiv(len, launch_.getInt64(lanes_), "full_packets");
    Value *tail = launch_.CreateURem(len, launch_.getInt64(lanes_), "tail_lanes");
    Value *groups = launch_.CreateUDiv(full, launch_.getInt64(K));
    Value *rest = launch_.CreateURem(full, launch_.getInt64(K));
    lower::PacketKind fullKind = t.full;
    auto columnOf = [&](Value *packet) { return b_.CreateMul(packet, b_.getInt64(lanes_)); };

    emitLoop(b_.getInt64(0), groups, "packets", [&](Value *g) {
      for (int k = 0; k < K; ++k) {
        Value *packet = b_.CreateAdd(b_.CreateMul(g, b_.getInt64(K)), b_.getInt64(k));
        emitPacket(s, fullKind, columnOf(packet), len, b_.getInt64(k));
      }
    });
    // Full packets left over after the groups of K go to accumulators 0..rest-1.
    for (int k = 0; k + 1 < K; ++k) {
      emitIf(b_.CreateICmpSGT(rest, b_.getInt64(k)), "rest", [&] {
        Value *packet = b_.CreateAdd(b_.CreateMul(groups, b_.getInt64(K)), b_.getInt64(k));
        emitPacket(s, fullKind, columnOf(packet), len, b_.getInt64(k));
      });
    }
    // The tail packet is packet number `full`, so its accumulator is `rest`.
    emitIf(b_.CreateICmpNE(tail, b_.getInt64(0)), "tail", [&] {
      emitPacket(s, lower::PacketKind::Masked, columnOf(full), len, K == 1 ? b_.getInt64(0) : rest);
    });

    for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
      const Expr &r = t.reductions[ri];
      std::vector<Value *> accs;
      for (llvm::AllocaInst *slot : s.accumulators[ri])
        accs.push_back(b_.CreateLoad(vf, slot));
      Value *v = combine(r->reduceOp(), accs);
      if (r->reduceOp() == ReduceOp::Mean)
        v = b_.CreateFDiv(v, b_.CreateSIToFP(len, b_.getFloatTy()));
      uniform_[r.get()] = v;
    }
  }

  void emitRowLoop() {
    launchEnd_->eraseFromParent();
    b_.SetInsertPoint(entry_);
    llvm::BasicBlock *rows = llvm::BasicBlock::Create(ctx_, "rows", fn_);
    b_.CreateBr(rows);
    // Launch values are inserted before the entry's branch from here on.
    launch_.SetInsertPoint(entry_->getTerminator());
    b_.SetInsertPoint(rows);
    emitLoop(rowBegin_, rowEnd_, "row", [&](Value *r) {
      row_ = r;
      rowBases_.clear();
      for (size_t i = 0; i < bases_.size(); ++i)
        rowBases_.push_back(b_.CreateInBoundsGEP(b_.getFloatTy(), bases_[i],
                                                 b_.CreateMul(r, strides_[i]),
                                                 bufferName(i) + ".row"));
      // Row-uniform values are only valid inside this row's iteration.
      for (size_t t = 0; t < plan_.traversals.size(); ++t)
        emitTraversal(plan_.traversals[t], static_cast<int>(t));
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
  std::vector<Value *> bases_, strides_, rowBases_;
  std::map<std::string, Value *> dims_;
  std::unordered_map<const Node *, Value *> uniform_, splat_;
  CodegenCounts counts_;
};

} // namespace

llvm::Function *emitKernel(const lower::KernelPlan &plan, llvm::Module &module,
                           const CodegenTarget &target, const std::string &entryName,
                           CodegenCounts *counts) {
  return KernelEmitter(plan, module, target).emit(entryName, counts);
}

} // namespace lanejit::codegen
