// Inline vector math: exp, log, tanh, sigmoid, erf, sqrt and rsqrt as plain LLVM IR.
//
// Every function takes a `float` or a `<W x float>` and emits the same
// sequence of IEEE operations for each lane, so a scalar and every packet
// width give identical bits. No libm calls, no fast-math flags, no
// approximate ISA instructions (rsqrt14/rcpps): results depend only on
// MathTarget. Algorithms and measured errors: docs/math.md.
#pragma once

#include "codegen/target.h"

#include <llvm/IR/IRBuilder.h>

namespace lanejit::codegen {


// e^x. Max error 1 ULP, denormal results gradual, overflow exactly as
// correctly rounded expf.
llvm::Value *emitExp(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);
// Natural log. Max error 1 ULP; log(±0) = -inf, log(x < 0) = NaN.
llvm::Value *emitLog(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);
// tanh(x). Max error 2 ULP; odd, saturates to ±1.
llvm::Value *emitTanh(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);
// 1 / (1 + e^-x). Max error 2 ULP, including tiny results for large -x.
llvm::Value *emitSigmoid(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);
// erf(x). Max error 2.5 ULP (docs/math.md); odd, saturates to ±1.
llvm::Value *emitErf(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);
// llvm.sqrt: correctly rounded.
llvm::Value *emitSqrt(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);
// 1.0f / llvm.sqrt(x): two correctly rounded operations, never rsqrtps.
llvm::Value *emitRsqrt(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &t);

} // namespace lanejit::codegen
