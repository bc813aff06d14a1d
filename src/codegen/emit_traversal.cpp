// The traversals of a kernel's row loop: packet loops over [0, live), the
// reductions' accumulators and their fixed combine tree, and the fills of a
// column-bounded traversal.
#include "codegen/kernel_emitter.h"

#include "codegen/emit_ops.h"

#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <limits>

namespace lanejit::codegen {

using llvm::Value;

PacketScope KernelEmitter::entryScope() {
  PacketScope scope{&b_};
  scope.base = [this](int buffer) { return rowBase(buffer); };
  scope.workspace = [this](int slot) { return workspaceSlots_.at(slot); };
  scope.uniform = [this](const Expr &e) { return splat_.at(e.get()); };
  scope.dim = [this](const Dim &d) { return dimValue(d); };
  return scope;
}

KernelEmitter::Helper KernelEmitter::makeHelper(const lower::Traversal &t, int index,
                                                lower::PacketKind kind) {
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
    case PacketEmitter::EnvironmentSlot::Base: v = rowBase(s.index); break;
    case PacketEmitter::EnvironmentSlot::Workspace: v = workspaceSlots_.at(s.index); break;
    case PacketEmitter::EnvironmentSlot::Uniform:
      v = uniform(s.value);
      if (s.value->type == DType::Bool)
        v = b_.CreateZExt(v, b_.getInt32Ty());
      break;
    case PacketEmitter::EnvironmentSlot::DimValue: v = dimValue(s.dim); break;
    }
    b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), h.env, i));
  }
  return h;
}

void KernelEmitter::emitPacket(TraversalState &s, lower::PacketKind kind, Value *column, Value *len,
                               Value *packetAcc, bool inRow) {
  const lower::Traversal &t = *s.traversal;
  std::vector<Value *> reduced;
  if (t.inline_bodies) {
    reduced = packets_.emitBody(t, kind, column, len, entryScope(), inRow);
  } else {
    Helper &h = kind == lower::PacketKind::Dense ? s.dense : s.masked;
    Value *result = b_.CreateCall(h.fn, {h.env, column, len});
    ++counts_.helper_calls;
    for (size_t i = 0; i < t.reductions.size(); ++i)
      reduced.push_back(b_.CreateExtractValue(result, {unsigned(i)}));
  }
  for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
    const Node &reduction = *t.reductions[ri];
    ReduceOp op = reduction.reduceOp();
    Value *v = reduced[ri];
    llvm::Type *type = v->getType();
    auto &accs = s.accumulators[ri];
    Value *acc = s.oneAccumulator[ri] ? b_.getInt64(0) : packetAcc;
    auto step = [&](Value *old) {
      return emitReductionStepOf(b_, reduction, old, v, plan_.integer_absmax, &target_.math);
    };
    auto stepInto = [&](Value *slot) { b_.CreateStore(step(b_.CreateLoad(type, slot)), slot); };
    if (!s.spilled.empty() && !llvm::isa<llvm::ConstantInt>(acc)) {
      llvm::Type *array = s.spilled[ri]->getAllocatedType();
      stepInto(b_.CreateInBoundsGEP(array, s.spilled[ri], {b_.getInt64(0), acc}));
      continue;
    }
    // max and min are exactly associative and commutative, so the tail's
    // accumulator cannot change their bits (lower/branchless_tail.cpp).
    bool anyOrder = op == ReduceOp::Max || op == ReduceOp::Min;
    if (!llvm::isa<llvm::ConstantInt>(acc) && anyOrder && plan_.branchless_tail)
      acc = b_.getInt64(0);
    if (auto *k = llvm::dyn_cast<llvm::ConstantInt>(acc)) {
      stepInto(accs[k->getZExtValue()]);
      continue;
    }
    // The tail joins accumulator `acc` without branches: every accumulator
    // takes a lane-masked step whose mask is the tail's lanes in accumulator
    // `acc` and none elsewhere (a merge-masked add on AVX-512). A lane left
    // out keeps its value, exactly what adding the identity does.
    for (size_t k = 0; k < accs.size(); ++k) {
      Value *old = b_.CreateLoad(type, accs[k]);
      Value *updated = step(old);
      Value *pick = s.tailMasks.empty() ? b_.CreateICmpEQ(acc, b_.getInt64(k)) : s.tailMasks[k];
      b_.CreateStore(b_.CreateSelect(pick, updated, old), accs[k]);
    }
  }
}

bool KernelEmitter::singleMaxAccumulator(ReduceOp op, llvm::Type *type) const {
  // Only entries compiled for C: their packet counts are constants, so the
  // leftover packets are never run on spilled accumulators, and C bounds
  // the chain. Past two groups of K packets, the K chains pay for
  // themselves.
  return plan_.single_max_accumulator && fixedCols_ && *fixedCols_ <= 2 * lower::kReductionLanes &&
         (op == ReduceOp::Max || op == ReduceOp::Min) && type->isFPOrFPVectorTy();
}

// AArch64 (no mask registers: LLVM turns a lane-masked load or store with a
// run-time mask into a branch and a lane access per lane): a bounded
// traversal's tail packet inside the row loads whole packets and stores its
// fill on the lanes past live, and its fills' tail is the row's last
// packet, all fill, when that lies past live (docs/aarch64-estimates.md,
// item 3). Inlined bodies over whole rows only (not the column-split entry).
bool KernelEmitter::inRowTails(const lower::Traversal &t) const {
  return plan_.in_row_tails && !target_.x86 && t.bound && t.inline_bodies && !part_ && !flatLen_;
}

// Two on AArch64's generic entry: its one-packet output loops were bound by
// dispatch in llvm-mca's apple-m1 model (a post-indexed load/store pair per
// packet is three micro-ops; docs/aarch64-estimates.md, item 5); two
// packets at immediate offsets took RMSNorm 1024x4097 from 2624 to 2372
// cycles a row. Entries compiled for C keep one: RoPE 17x66 lost (38 to
// 46) with two, and their trip counts are constants already.
int KernelEmitter::outputPackets() const {
  return plan_.unroll_output_loops && !target_.x86 && !fixedCols_ ? 2 : 1;
}

// The fixed tree over the K accumulators, then over the W lanes. A max or
// min tree gives its NaN exactly when some lane of some accumulator is NaN
// (each IEEE step returns the same quiet NaN for any NaN operand) and the
// NaN-free tree otherwise. So the accumulators are tested for a NaN once (a
// compare and an OR each, beside the tree) and the tree's steps leave out
// their NaN select (emitOrderedMinMax: one vrangeps instead of three
// instructions on AVX-512DQ); one select at the end: the same bits.
Value *KernelEmitter::combine(ReduceOp op, std::vector<Value *> accs) {
  bool minMax =
      (op == ReduceOp::Max || op == ReduceOp::Min) && accs[0]->getType()->isFPOrFPVectorTy();
  Value *anyNaN = nullptr;
  if (minMax) {
    Value *nan = nullptr;
    for (Value *acc : accs) {
      Value *u = b_.CreateFCmpUNO(acc, acc);
      nan = nan ? b_.CreateOr(nan, u) : u;
    }
    anyNaN = b_.CreateICmpNE(b_.CreateBitCast(nan, b_.getIntNTy(static_cast<unsigned>(lanes_))),
                             b_.getIntN(static_cast<unsigned>(lanes_), 0), "any.nan");
  }
  auto step = [&](Value *x, Value *y) {
    return minMax ? emitOrderedMinMax(b_, op == ReduceOp::Max, x, y, &target_.math)
                  : emitReductionStep(b_, op, x, y, &target_.math);
  };
  while (accs.size() > 1) {
    size_t half = accs.size() / 2;
    for (size_t k = 0; k < half; ++k)
      accs[k] = step(accs[k], accs[k + half]);
    accs.resize(half);
  }
  Value *v = accs[0];
  for (int width = lanes_; width > 1; width /= 2) {
    std::vector<int> lo, hi;
    for (int i = 0; i < width / 2; ++i) {
      lo.push_back(i);
      hi.push_back(i + width / 2);
    }
    v = step(b_.CreateShuffleVector(v, lo), b_.CreateShuffleVector(v, hi));
  }
  Value *result = b_.CreateExtractElement(v, uint64_t(0));
  if (minMax) {
    // emitIeeeMinMax's NaN.
    Value *nan = llvm::ConstantFP::get(result->getType(), std::numeric_limits<double>::quiet_NaN());
    result = b_.CreateSelect(anyNaN, nan, result);
  }
  return result;
}

void KernelEmitter::emitTraversal(const lower::Traversal &t, int index) {
  prepareUniformOperands(t);

  TraversalState s{&t};
  if (!t.inline_bodies) {
    if (t.full == lower::PacketKind::Dense)
      s.dense = makeHelper(t, index, lower::PacketKind::Dense);
    s.masked = makeHelper(t, index, lower::PacketKind::Masked);
  }
  int K = t.reductions.empty() ? outputPackets() : plan_.accumulators;
  s.packets = K;
  for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
    llvm::Type *type = valueType(ctx_, t.reductions[ri]->args[0]->type, lanes_);
    s.accumulators.emplace_back();
    for (int k = 0; k < K; ++k) {
      auto *slot = entryAlloca(type, "acc" + std::to_string(index) + "." + std::to_string(ri) +
                                         "." + std::to_string(k));
      b_.CreateStore(reductionIdentity(type, t.reductions[ri]->reduceOp()), slot);
      s.accumulators.back().push_back(slot);
    }
    s.oneAccumulator.push_back(K > 1 && singleMaxAccumulator(t.reductions[ri]->reduceOp(), type));
  }

  // A flattened plan's one traversal covers the call's rows when dense.
  Value *len = flatLen_ ? flatLen_ : dimValue(t.len);
  s.len = len;
  s.inRowTails = inRowTails(t);
  // Packets cover [0, live): all of len, or up to the column bound. A
  // bound is row-uniform, so the packet counts are then computed per row.
  Value *live = t.bound ? liveColumns(*t.bound, len) : len;
  llvm::IRBuilder<> &counts = t.bound ? b_ : launch_;
  Value *full = counts.CreateUDiv(live, counts.getInt64(lanes_), "full_packets");
  Value *tail = counts.CreateURem(live, counts.getInt64(lanes_), "tail_lanes");
  Value *groups = counts.CreateUDiv(full, counts.getInt64(K));
  Value *rest = counts.CreateURem(full, counts.getInt64(K));
  // The tail packet is packet number `full`, so its accumulator is `rest`.
  bool summed = std::any_of(t.reductions.begin(), t.reductions.end(), [](const Expr &r) {
    return r->reduceOp() == ReduceOp::Sum || r->reduceOp() == ReduceOp::Mean;
  });
  if (K > 1 && summed && t.tail_masks)
    s.tailMasks = tailMasks(counts, tail, rest, K);
  // The column-split entry runs chunks of a row, not whole rows: its
  // stores stay normal ones.
  if (t.stream_stores && !part_)
    emitStreamingPackets(s, live);
  else
    emitChunkedPackets(s, live, groups, rest, full, tail);
  if (t.bound && part_)
    emitPartFills(t, live, len);
  else if (t.bound)
    emitFills(t, live, len, s.inRowTails);
  if (part_)
    return;

  for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
    const Expr &r = t.reductions[ri];
    llvm::Type *type = valueType(ctx_, r->args[0]->type, lanes_);
    std::vector<Value *> accs;
    for (llvm::AllocaInst *slot : s.accumulators[ri])
      accs.push_back(b_.CreateLoad(type, slot));
    if (s.oneAccumulator[ri])
      accs.resize(1); // the others still hold the identity
    Value *v = combine(r->reduceOp(), accs);
    if (r->reduceOp() == ReduceOp::Mean)
      v = b_.CreateFDiv(v, b_.CreateSIToFP(len, b_.getFloatTy()));
    uniform_[r.get()] = v;
  }
}

Value *KernelEmitter::laterChunks(llvm::IRBuilder<> &b, Value *live) {
  Value *chunk = b.getInt64(lower::kChunkColumns);
  Value *later = b.CreateUDiv(b.CreateSub(live, b.getInt64(1)), chunk);
  return b.CreateSelect(b.CreateICmpSGT(live, chunk), later, b.getInt64(0), "later_chunks");
}

Value *KernelEmitter::partialPtr(int slot, Value *chunk, int k) {
  Value *index = b_.CreateAdd(b_.CreateMul(b_.getInt64(slot), partialChunks_), chunk);
  index = b_.CreateMul(index, b_.getInt64(lower::kReductionLanes));
  index = b_.CreateAdd(index, b_.getInt64(int64_t(k) * lanes_));
  return b_.CreateInBoundsGEP(b_.getFloatTy(), partials_, index);
}

void KernelEmitter::emitChunkedPackets(TraversalState &s, Value *live, Value *groups, Value *rest,
                                       Value *full, Value *tail) {
  const lower::Traversal &t = *s.traversal;
  int K = s.packets;
  llvm::IRBuilder<> &counts = t.bound ? b_ : launch_;
  auto columnOf = [&](Value *packet) { return b_.CreateMul(packet, b_.getInt64(lanes_)); };
  // Rows too short to gain: none (an entry compiled for its C knows; the
  // generic entry's gate checks C at run time).
  bool prefetch =
      t.prefetch_next_row && !part_ && (!fixedCols_ || *fixedCols_ * 4 >= t.prefetch_min_row_bytes);
  std::vector<NextRow> nextRows = prefetch ? nextRowBases() : std::vector<NextRow>{};
  Value *gate = prefetch ? prefetchGate(t.prefetch_min_row_bytes) : nullptr;
  auto groupOfPackets = [&](Value *g) {
    if (!nextRows.empty())
      emitPrefetches(gate, nextRows, b_.CreateMul(g, b_.getInt64(int64_t(K) * lanes_)), K);
    for (int k = 0; k < K; ++k) {
      Value *packet = b_.CreateAdd(b_.CreateMul(g, b_.getInt64(K)), b_.getInt64(k));
      emitPacket(s, t.full, columnOf(packet), live, b_.getInt64(k));
    }
  };
  auto types = [&](size_t ri) { return valueType(ctx_, t.reductions[ri]->args[0]->type, lanes_); };
  // Full packets left over after the groups of K go to accumulators
  // 0..rest-1, and the tail packet (number `full`) to accumulator `rest`.
  // With rest known (an entry compiled for C), exactly those packets are
  // emitted. In the generic entry, one loop runs them on the accumulators
  // spilled to an array, indexed by rest at run time, instead of K-1
  // inlined bodies behind branches: the same additions into the same
  // accumulators in less than half the code. An entry compiled for C whose
  // rows stop at a column bound keeps the branches: it runs hot calls, and
  // the loop's spill cost masked softmax 17x65 4% (the lane-masked tail of
  // branchless_tail keeps its own path too).
  auto restAndTail = [&] {
    auto *knownRest = llvm::dyn_cast<llvm::ConstantInt>(rest);
    bool spill =
        K > 1 && !t.reductions.empty() && !knownRest && !fixedCols_ && plan_.leftover_loop &&
        !plan_.branchless_tail;
    if (spill) {
      if (s.spilled.empty())
        for (size_t ri = 0; ri < t.reductions.size(); ++ri)
          s.spilled.push_back(
              entryAlloca(llvm::ArrayType::get(types(ri), K), "leftover." + std::to_string(ri)));
      for (size_t ri = 0; ri < t.reductions.size(); ++ri)
        for (int k = 0; k < K; ++k)
          b_.CreateStore(b_.CreateLoad(types(ri), s.accumulators[ri][k]),
                         b_.CreateConstInBoundsGEP2_64(s.spilled[ri]->getAllocatedType(),
                                                       s.spilled[ri], 0, k));
      emitLoop(b_.getInt64(0), rest, "rest", [&](Value *k) {
        Value *packet = b_.CreateAdd(b_.CreateMul(groups, b_.getInt64(K)), k);
        emitPacket(s, t.full, columnOf(packet), live, k);
      });
    } else {
      int known = knownRest ? int(knownRest->getSExtValue()) : K - 1;
      for (int k = 0; k < known; ++k)
        emitIf(knownRest ? b_.getTrue() : b_.CreateICmpSGT(rest, b_.getInt64(k)), "rest", [&] {
          Value *packet = b_.CreateAdd(b_.CreateMul(groups, b_.getInt64(K)), b_.getInt64(k));
          emitPacket(s, t.full, columnOf(packet), live, b_.getInt64(k));
        });
    }
    emitIf(b_.CreateICmpNE(tail, b_.getInt64(0)), "tail", [&] {
      auto masked = [&](bool inRow) {
        emitPacket(s, lower::PacketKind::Masked, columnOf(full), live,
                   K == 1 ? b_.getInt64(0) : rest, inRow);
      };
      if (!s.inRowTails)
        return masked(false);
      Value *end = b_.CreateAdd(columnOf(full), b_.getInt64(lanes_));
      emitIfElse(b_.CreateICmpSLE(end, s.len), "tail.in_row", [&] { masked(true); },
                 [&] { masked(false); });
    });
    if (spill)
      for (size_t ri = 0; ri < t.reductions.size(); ++ri)
        for (int k = 0; k < K; ++k)
          b_.CreateStore(
              b_.CreateLoad(types(ri), b_.CreateConstInBoundsGEP2_64(
                                           s.spilled[ri]->getAllocatedType(), s.spilled[ri], 0, k)),
              s.accumulators[ri][k]);
  };
  auto resetAccumulators = [&] {
    for (size_t ri = 0; ri < t.reductions.size(); ++ri)
      for (llvm::AllocaInst *slot : s.accumulators[ri])
        b_.CreateStore(reductionIdentity(types(ri), t.reductions[ri]->reduceOp()), slot);
  };
  // Chunks hold whole groups of K packets, so a packet's accumulator is the
  // same as in an unchunked loop, and the rest and tail are in the last.
  Value *perChunk = b_.getInt64(lower::kChunkColumns / (int64_t(lanes_) * K));
  if (!part_ && t.reductions.empty()) {
    emitLoop(b_.getInt64(0), groups, "packets", groupOfPackets);
    restAndTail();
    return;
  }
  Value *later = laterChunks(counts, live);
  if (part_) {
    Value *end = b_.CreateSelect(b_.CreateICmpSLT(chunkEnd_, b_.CreateAdd(later, b_.getInt64(1))),
                                 chunkEnd_, b_.CreateAdd(later, b_.getInt64(1)));
    emitLoop(chunkBegin_, end, "chunks", [&](Value *j) {
      resetAccumulators();
      Value *first = b_.CreateMul(j, perChunk);
      Value *next = b_.CreateAdd(first, perChunk);
      emitLoop(first, b_.CreateSelect(b_.CreateICmpSLT(next, groups), next, groups), "packets",
               groupOfPackets);
      emitIf(b_.CreateICmpEQ(j, later), "chunk.last", restAndTail);
      for (size_t ri = 0; ri < t.reductions.size(); ++ri)
        for (int k = 0; k < K; ++k)
          b_.CreateAlignedStore(b_.CreateLoad(types(ri), s.accumulators[ri][k]),
                                partialPtr(partSlot_ + int(ri), j, k), llvm::Align(4));
    });
    return;
  }
  // Serial: the row's chunks in order, each chunk's packets into the
  // accumulators; a chunk before the last (rare: rows past kChunkColumns)
  // then adds its partials to running totals that start at the identity
  // (identity + x is x, bit for bit) and restarts them. The last chunk's
  // rest and tail join its partials, which join the totals last. A row of
  // one chunk is exactly the unchunked loop.
  std::vector<std::vector<llvm::AllocaInst *>> totals(t.reductions.size());
  for (size_t ri = 0; ri < t.reductions.size(); ++ri)
    for (int k = 0; k < K; ++k)
      totals[ri].push_back(entryAlloca(types(ri), "total." + std::to_string(ri)));
  Value *isLong = b_.CreateICmpNE(later, b_.getInt64(0), "long_row");
  auto joinTotals = [&](bool intoTotals) {
    for (size_t ri = 0; ri < t.reductions.size(); ++ri)
      for (int k = 0; k < K; ++k) {
        Value *partial = b_.CreateLoad(types(ri), s.accumulators[ri][k]);
        Value *total = b_.CreateLoad(types(ri), totals[ri][k]);
        b_.CreateStore(
            emitReductionStep(b_, t.reductions[ri]->reduceOp(), total, partial, &target_.math),
            intoTotals ? totals[ri][k] : s.accumulators[ri][k]);
      }
  };
  emitIf(
      isLong, "long",
      [&] {
        for (size_t ri = 0; ri < t.reductions.size(); ++ri)
          for (int k = 0; k < K; ++k)
            b_.CreateStore(reductionIdentity(types(ri), t.reductions[ri]->reduceOp()),
                           totals[ri][k]);
      },
      /*unlikely=*/true);
  emitLoop(b_.getInt64(0), counts.CreateAdd(later, counts.getInt64(1)), "chunks", [&](Value *j) {
    Value *first = b_.CreateMul(j, perChunk);
    Value *next = b_.CreateAdd(first, perChunk);
    emitLoop(first, b_.CreateSelect(b_.CreateICmpSLT(next, groups), next, groups), "packets",
             groupOfPackets);
    emitIf(
        b_.CreateICmpNE(j, later), "chunk.join",
        [&] {
          joinTotals(/*intoTotals=*/true);
          resetAccumulators();
        },
        /*unlikely=*/true);
  });
  restAndTail();
  emitIf(
      isLong, "long.join", [&] { joinTotals(/*intoTotals=*/false); }, /*unlikely=*/true);
}

void KernelEmitter::finishFromPartials(const lower::Traversal &t, int firstSlot) {
  Value *len = dimValue(t.len);
  Value *live = t.bound ? liveColumns(*t.bound, len) : len;
  Value *later = laterChunks(b_, live);
  int K = plan_.accumulators;
  for (size_t ri = 0; ri < t.reductions.size(); ++ri) {
    const Expr &r = t.reductions[ri];
    llvm::Type *type = valueType(ctx_, r->args[0]->type, lanes_);
    int slot = firstSlot + static_cast<int>(ri);
    std::vector<llvm::AllocaInst *> totals;
    for (int k = 0; k < K; ++k) {
      totals.push_back(entryAlloca(type, "finish." + std::to_string(slot)));
      b_.CreateStore(
          b_.CreateAlignedLoad(type, partialPtr(slot, b_.getInt64(0), k), llvm::Align(4)),
          totals.back());
    }
    emitLoop(b_.getInt64(1), b_.CreateAdd(later, b_.getInt64(1)), "finish", [&](Value *j) {
      for (int k = 0; k < K; ++k) {
        Value *partial = b_.CreateAlignedLoad(type, partialPtr(slot, j, k), llvm::Align(4));
        Value *total = b_.CreateLoad(type, totals[k]);
        b_.CreateStore(emitReductionStep(b_, r->reduceOp(), total, partial, &target_.math),
                       totals[k]);
      }
    });
    std::vector<Value *> accs;
    for (llvm::AllocaInst *total : totals)
      accs.push_back(b_.CreateLoad(type, total));
    Value *v = combine(r->reduceOp(), accs);
    if (r->reduceOp() == ReduceOp::Mean)
      v = b_.CreateFDiv(v, b_.CreateSIToFP(len, b_.getFloatTy()));
    uniform_[r.get()] = v;
  }
}

void KernelEmitter::emitPartFills(const lower::Traversal &t, Value *live, Value *len) {
  // This call's columns are [chunk_begin, chunk_end) chunks, clamped to len;
  // its fills are the part of [live, len) among them.
  Value *chunk = b_.getInt64(lower::kChunkColumns);
  Value *lo = b_.CreateMul(chunkBegin_, chunk);
  Value *hi = b_.CreateMul(chunkEnd_, chunk);
  hi = b_.CreateSelect(b_.CreateICmpSLT(hi, len), hi, len);
  Value *from = b_.CreateSelect(b_.CreateICmpSGT(live, lo), live, lo);
  emitIf(b_.CreateICmpSLT(from, hi), "part.fills", [&] { emitFills(t, from, hi); });
}

std::vector<Value *> KernelEmitter::tailMasks(llvm::IRBuilder<> &b, Value *tail, Value *rest,
                                              int K) {
  Value *lanes = b.CreateICmpSLT(laneIds(ctx_, lanes_),
                                 b.CreateVectorSplat(lanes_, b.CreateTrunc(tail, b.getInt32Ty())));
  std::vector<Value *> masks;
  for (int k = 0; k < K; ++k) {
    Value *mine = b.CreateVectorSplat(lanes_, b.CreateICmpEQ(rest, b.getInt64(k)));
    masks.push_back(b.CreateAnd(lanes, mine, "tail.acc" + std::to_string(k)));
  }
  return masks;
}

Value *KernelEmitter::liveColumns(const lower::ColumnBound &bound, Value *len) {
  Value *limit = b_.CreateSExt(uniform(bound.limit), b_.getInt64Ty());
  Value *live = b_.CreateSub(limit, dimValue(bound.col_begin));
  if (bound.inclusive)
    live = b_.CreateAdd(live, b_.getInt64(1));
  live = b_.CreateSelect(b_.CreateICmpSLT(live, b_.getInt64(0)), b_.getInt64(0), live);
  return b_.CreateSelect(b_.CreateICmpSGT(live, len), len, live, "live_columns");
}

void KernelEmitter::emitFills(const lower::Traversal &t, Value *live, Value *len, bool inRowTail) {
  size_t inputs = program_.inputs.size();
  Value *count = b_.CreateSub(len, live);
  Value *packets = b_.CreateUDiv(count, b_.getInt64(lanes_));
  Value *left = b_.CreateURem(count, b_.getInt64(lanes_));
  auto store = [&](Value *column, Value *mask) {
    for (size_t i = 0; i < t.writes.size(); ++i) {
      const Write &w = program_.writes[t.writes[i]];
      size_t buffer = inputs + w.output;
      Value *value =
          emitStored(b_, splatOf(t.bound->fills[i]), program_.bufferType(buffer), &target_.math);
      Value *index = b_.CreateAdd(dimValue(w.begin), column);
      Value *ptr = b_.CreateInBoundsGEP(elementType(buffer), rowBase(int(buffer)), index);
      if (mask)
        b_.CreateMaskedStore(value, ptr, elementAlign(value->getType()), mask);
      else
        b_.CreateAlignedStore(value, ptr, elementAlign(value->getType()));
    }
  };
  emitLoop(b_.getInt64(0), packets, "fill", [&](Value *p) {
    store(b_.CreateAdd(live, b_.CreateMul(p, b_.getInt64(lanes_))), nullptr);
  });
  auto maskedTail = [&] {
    Value *column = b_.CreateAdd(live, b_.CreateMul(packets, b_.getInt64(lanes_)));
    Value *mask = b_.CreateICmpSLT(
        laneIds(ctx_, lanes_), b_.CreateVectorSplat(lanes_, b_.CreateTrunc(left, b_.getInt32Ty())));
    store(column, mask);
  };
  emitIf(b_.CreateICmpNE(left, b_.getInt64(0)), "fill.tail", [&] {
    if (!inRowTail)
      return maskedTail();
    // The row's last packet, when all of it is fill: it ends the fills, and
    // stores again the fill some of its columns already hold.
    Value *last = b_.CreateSub(len, b_.getInt64(lanes_));
    emitIfElse(b_.CreateICmpSGE(last, live), "fill.tail.in_row",
               [&] { store(last, nullptr); }, maskedTail);
  });
}

std::vector<KernelEmitter::NextRow> KernelEmitter::nextRowBases() {
  // The next row's start of every row-tensor input; past the last row it
  // points outside the buffer, which a prefetch may (it never faults).
  std::vector<NextRow> next;
  for (size_t i = 0; i < program_.inputs.size(); ++i)
    if (program_.inputs[i].kind == ParamKind::RowTensor)
      next.push_back({b_.CreateGEP(elementType(i), bases_[i],
                                   b_.CreateMul(b_.CreateAdd(row_, b_.getInt64(1)), strides_[i]),
                                   bufferName(i) + ".next_row"),
                      bytesOf(program_.inputs[i].type)});
  return next;
}

Value *KernelEmitter::prefetchGate(int64_t minRowBytes) {
  // Row data of the whole call (every thread's rows), so all threads
  // decide alike: rows x C x the element size of each row-tensor input and
  // output; and rows of at least minRowBytes (of f32).
  int64_t rowBytesPerColumn = 0;
  for (const Output &o : program_.outputs)
    rowBytesPerColumn += bytesOf(o.type);
  for (const Param &p : program_.inputs)
    rowBytesPerColumn += p.kind == ParamKind::RowTensor ? bytesOf(p.type) : 0;
  Value *bytes =
      launch_.CreateMul(launch_.CreateMul(rows_, cols_), launch_.getInt64(rowBytesPerColumn));
  Value *longRows = launch_.CreateICmpSGE(launch_.CreateMul(cols_, launch_.getInt64(4)),
                                          launch_.getInt64(minRowBytes), "prefetch.long_rows");
  return launch_.CreateAnd(launch_.CreateICmpSGE(bytes, launch_.getInt64(plan_.prefetch_min_bytes)),
                           longRows, "prefetch.call");
}

void KernelEmitter::emitPrefetches(Value *gate, const std::vector<NextRow> &nextRows, Value *column,
                                   int K) {
  // One prefetch per 64-byte line the group's K packets cover (at least
  // one per group), into all cache levels.
  emitIf(gate, "prefetch", [&] {
    for (const NextRow &next : nextRows) {
      int64_t bytes = int64_t(K) * lanes_ * next.element_bytes;
      Value *start = b_.CreateMul(column, b_.getInt64(next.element_bytes));
      for (int64_t line = 0; line < std::max<int64_t>(bytes / 64, 1); ++line) {
        Value *at = b_.CreateGEP(b_.getInt8Ty(), next.base,
                                 b_.CreateAdd(start, b_.getInt64(line * 64)));
        b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {at->getType()},
                           {at, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
      }
    }
  });
}

} // namespace lanejit::codegen
