// AVX-512's masked f32 intrinsics (llvm.x86.avx512.mask.*) as codegen uses
// them: on every lane of a packet, in the widest form the target has.
// Shared by the math (vscalefps), IEEE max/min (vrangeps) and the NaN
// canonicalisation (vfixupimmps).
#pragma once

#include "codegen/target.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <vector>

namespace lanejit::codegen {

// The intrinsic for a packet of `type`: the 512-bit form at 16 lanes with
// AVX-512F, the 256- and 128-bit forms at 8 and 4 lanes with VL as well;
// not_intrinsic for scalars, other widths and targets without them.
inline llvm::Intrinsic::ID avx512Form(const MathTarget &t, llvm::Type *type,
                                      llvm::Intrinsic::ID lanes16, llvm::Intrinsic::ID lanes8,
                                      llvm::Intrinsic::ID lanes4) {
  auto *v = llvm::dyn_cast<llvm::FixedVectorType>(type);
  if (!v || !v->getElementType()->isFloatTy() || !t.has_avx512f)
    return llvm::Intrinsic::not_intrinsic;
  if (v->getNumElements() == 16)
    return lanes16;
  if (v->getNumElements() == 8 && t.has_avx512vl)
    return lanes8;
  if (v->getNumElements() == 4 && t.has_avx512vl)
    return lanes4;
  return llvm::Intrinsic::not_intrinsic;
}

// Calls `id` (an avx512Form) on every lane of `type`: `args` are the
// operands up to the pass-through; the all-on mask follows, and for the
// 512-bit forms _MM_FROUND_CUR_DIRECTION.
inline llvm::Value *callOnAllLanes(llvm::IRBuilder<> &b, llvm::Intrinsic::ID id, llvm::Type *type,
                                   std::vector<llvm::Value *> args) {
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(type)->getNumElements();
  args.push_back(lanes == 16 ? b.getInt16(0xffff) : b.getInt8(0xff));
  if (lanes == 16)
    args.push_back(b.getInt32(4));
  return b.CreateIntrinsic(id, {}, args);
}

} // namespace lanejit::codegen
