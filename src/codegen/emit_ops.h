// The LLVM form of every IR operation, for scalars and packets alike.
//
// The same function emits a row-uniform (scalar) value and a W-lane packet,
// so an operation gives identical bits whichever way, and for any W. Nothing
// here reassociates or contracts: fast math stays off.
#pragma once

#include "codegen/math.h"

#include <lanejit/ir.h>

#include <llvm/IR/IRBuilder.h>

#include <cstdint>

#include <vector>

namespace lanejit::codegen {

// The LLVM type of `type` for a scalar (lanes == 0) or a packet.
llvm::Type *valueType(llvm::LLVMContext &ctx, DType type, int lanes);

llvm::Value *emitUnary(llvm::IRBuilder<> &b, UnaryOp op, DType operandType, llvm::Value *x,
                       const MathTarget &math);
// `math` may be null (no target-specific instructions; the same bits).
llvm::Value *emitBinary(llvm::IRBuilder<> &b, BinaryOp op, DType operandType, llvm::Value *x,
                        llvm::Value *y, const MathTarget *math = nullptr);
// x * y + z rounded once: llvm.fma with FMA hardware, else exact in double
// with a sum rounded to odd (no fmaf call per lane).
llvm::Value *emitFma(llvm::IRBuilder<> &b, llvm::Value *x, llvm::Value *y, llvm::Value *z,
                     const MathTarget &math);

// An elementwise node (Unary, Binary, Select, Fma) on operands already
// emitted; throws Error(Compile) for any other kind.
llvm::Value *emitElementwise(llvm::IRBuilder<> &b, const Node &n,
                             const std::vector<llvm::Value *> &operands, const MathTarget &math);

// What an output element holds: `x` with every NaN lane replaced by the
// canonical quiet NaN 0xffc00000 (f32; other types unchanged). A NaN's
// sign and payload come from whichever operand x86 saw first, which the
// register allocator chooses, so they differ between switches and opt
// levels; the stored bits must not (docs/switches.md, "NaN results").
// 0xffc00000 is x86's default NaN (what invalid operations produce), which
// AVX-512's vfixupimmps writes in one instruction; other targets (and a
// null `math`) compare and select, with the same bits.
constexpr uint32_t kCanonicalNaNBits = 0xffc00000u;
llvm::Value *emitCanonicalNaN(llvm::IRBuilder<> &b, llvm::Value *x,
                              const MathTarget *math = nullptr);

// Buffers in memory. A buffer of `storage` (f32, bf16, f16 or i8) holds
// elements of memoryType: float, i16 (bf16 and f16 bits) or i8.
llvm::Type *memoryType(llvm::LLVMContext &ctx, DType storage, int lanes);
// The alignment of one element of `type` (a scalar or vector type): what a
// buffer's addresses are known to have.
inline llvm::Align elementAlign(llvm::Type *type) {
  return llvm::Align(type->getScalarSizeInBits() / 8);
}
// Elements loaded as memoryType, widened to f32: exact (a NaN stays NaN).
llvm::Value *emitWiden(llvm::IRBuilder<> &b, llvm::Value *loaded, DType storage,
                       const MathTarget *math = nullptr);
// What a write stores for an f32 value `x`: the canonical NaN for any NaN
// (emitCanonicalNaN), then for bf16, f16 and i8 one rounding to
// nearest-even, in memoryType. The bits of lanejit::roundToBF16/roundToF16/
// roundToI8 (lanejit/element_types.h) on every target.
llvm::Value *emitStored(llvm::IRBuilder<> &b, llvm::Value *x, DType storage,
                        const MathTarget *math = nullptr);
// emitStored for an `x` whose NaNs are already canonical.
llvm::Value *emitRoundCanonical(llvm::IRBuilder<> &b, llvm::Value *x, DType storage,
                                const MathTarget *math = nullptr);

// emitIeeeMinMax's result where neither operand is NaN (vrangeps on
// AVX-512DQ, else two x86 maxes or mins and an AND or OR), without its NaN
// select; for operands known not to be NaN.
llvm::Value *emitOrderedMinMax(llvm::IRBuilder<> &b, bool isMax, llvm::Value *x, llvm::Value *y,
                               const MathTarget *math = nullptr);

// Reductions: the value that leaves an accumulator unchanged bit for bit
// (-0.0 for sums: -0 + x == x for every x, including +0), and the step
// (`math` may be null: no target-specific instructions, the same bits).
llvm::Constant *reductionIdentity(llvm::Type *type, ReduceOp op);
llvm::Value *emitReductionStep(llvm::IRBuilder<> &b, ReduceOp op, llvm::Value *acc, llvm::Value *x,
                               const MathTarget *math = nullptr);
// A step of `reduction` (a reduce or group node) on packets of its operand:
// emitReductionStep, except, with `integerAbsMax`, a max over absolute
// values (an absmax, as quantization takes): a signed integer max of the
// bits (CompileOptions::integer_absmax).
llvm::Value *emitReductionStepOf(llvm::IRBuilder<> &b, const Node &reduction, llvm::Value *acc,
                                 llvm::Value *x, bool integerAbsMax,
                                 const MathTarget *math = nullptr);

} // namespace lanejit::codegen
