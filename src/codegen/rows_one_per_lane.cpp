// Rows across lanes with one row per lane (L = 1): W x W transposes of a
// block's row chunks, the packet-local reduction order per lane.
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
  llvm::Type *packet = memory(buffer, W_);
  llvm::Align align = elementAlign(packet);
  // W rows of this chunk of columns, loaded (and widened) and transposed once.
  int64_t chunk = column / W_;
  auto [it, fresh] = chunks_.try_emplace({buffer, chunk});
  if (fresh) {
    int64_t width = dim(program_.inputs.at(buffer).cols);
    int64_t count = std::min<int64_t>(W_, width - chunk * W_);
    std::vector<Value *> rows;
    for (int r = 0; r < W_; ++r) {
      Value *ptr = b_.CreateConstInBoundsGEP1_64(memory(buffer), rowPointer(buffer, r), chunk * W_);
      if (!activeRows_ && count == W_) {
        rows.push_back(widen(buffer, b_.CreateAlignedLoad(packet, ptr, align)));
        continue;
      }
      if (activeRows_) {
        rows.push_back(widen(buffer, b_.CreateMaskedLoad(packet, ptr, align, rowMask(r, count),
                                                         llvm::Constant::getNullValue(packet))));
        continue;
      }
      // A partial chunk of a full block: only its columns are read, then
      // padded to W lanes.
      llvm::Type *part = memory(buffer, static_cast<int>(count));
      std::vector<int> pad;
      for (int i = 0; i < W_; ++i)
        pad.push_back(i < count ? i : -1);
      rows.push_back(b_.CreateShuffleVector(
          widen(buffer, b_.CreateAlignedLoad(part, ptr, align)), pad));
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
    std::vector<int> first;
    for (int i = 0; i < count; ++i)
      first.push_back(i);
    for (int r = 0; r < W_; ++r) {
      Value *ptr = b_.CreateConstInBoundsGEP1_64(memory(buffer), rowPointer(buffer, r), chunk * W_);
      llvm::Align align = elementAlign(memory(buffer));
      if (activeRows_)
        b_.CreateMaskedStore(narrow(buffer, m[r]), ptr, align, rowMask(r, count));
      else if (count == W_)
        b_.CreateAlignedStore(narrow(buffer, m[r]), ptr, align);
      else
        b_.CreateAlignedStore(narrow(buffer, b_.CreateShuffleVector(m[r], first)), ptr, align);
    }
  }
}

} // namespace lanejit::codegen
