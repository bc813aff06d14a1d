#include "codegen/emit_ops.h"

#include "codegen/avx512_calls.h"

#include <lanejit/error.h>

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <limits>

namespace lanejit::codegen {
namespace {

using llvm::Value;

Value *constLike(Value *like, double v) {
  return llvm::ConstantFP::get(like->getType(), v);
}
Value *intLike(Value *like, int64_t v) {
  return llvm::ConstantInt::get(like->getType(), v, /*isSigned=*/true);
}

// Bit-level reinterpretation that works for scalars and vectors.
Value *asInt(llvm::IRBuilder<> &b, Value *x) {
  llvm::Type *t = x->getType();
  llvm::Type *i =
      t->isVectorTy()
          ? static_cast<llvm::Type *>(llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(t)))
          : b.getInt32Ty();
  return b.CreateBitCast(x, i);
}

// On AArch64 NEON (math->aarch64_neon), `x` with its NaN lanes replaced
// by the f32 `nanBits`: facge x, x (|x| >= |x|: all ones unless x is NaN)
// per q register, and x's bits kept under it: facge + bif. A plain `fcmp
// uno x, x` becomes `uno x, 0.0` in InstCombine, which AArch64 lowers as
// two compares and an OR. Null where that does not apply (other targets,
// scalars).
Value *replaceNaNOnNeon(llvm::IRBuilder<> &b, Value *x, uint32_t nanBits, const MathTarget *math) {
  auto *vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!math || !math->aarch64_neon || !vector || !vector->getElementType()->isFloatTy() ||
      vector->getNumElements() % 4 != 0)
    return nullptr;
  llvm::Type *i32x4 = llvm::FixedVectorType::get(b.getInt32Ty(), 4);
  std::vector<Value *> parts;
  unsigned n = vector->getNumElements();
  for (unsigned at = 0; at < n; at += 4) {
    Value *part =
        n == 4 ? x : b.CreateShuffleVector(x, {int(at), int(at + 1), int(at + 2), int(at + 3)});
    parts.push_back(b.CreateIntrinsic(llvm::Intrinsic::aarch64_neon_facge,
                                      {i32x4, part->getType()}, {part, part}));
  }
  while (parts.size() > 1) { // concatenated back in lane order
    std::vector<Value *> joined;
    for (size_t i = 0; i < parts.size(); i += 2) {
      unsigned half = llvm::cast<llvm::FixedVectorType>(parts[i]->getType())->getNumElements();
      std::vector<int> order(2 * half);
      for (unsigned k = 0; k < 2 * half; ++k)
        order[k] = int(k);
      joined.push_back(b.CreateShuffleVector(parts[i], parts[i + 1], order));
    }
    parts = joined;
  }
  Value *keep = parts[0];
  Value *bits = asInt(b, x);
  Value *nan = llvm::ConstantInt::get(bits->getType(), nanBits);
  Value *merged = b.CreateOr(b.CreateAnd(bits, keep), b.CreateAnd(nan, b.CreateNot(keep)));
  return b.CreateBitCast(merged, x->getType(), "nan.replaced");
}

// IEEE 754-2019 maximum/minimum: any NaN gives the canonical quiet NaN, and
// -0 < +0. Commutative and associative, so a reduction's result does not
// depend on its order — unlike x86 maxps, which returns its second operand
// on NaN and on equal zeros.
Value *emitIeeeMinMax(llvm::IRBuilder<> &b, bool isMax, Value *x, Value *y,
                      const MathTarget *math) {
  Value *ordered = emitOrderedMinMax(b, isMax, x, y, math);
  // AArch64's fmax/fmin already give a NaN for any NaN operand: only its
  // bits need making those of the select below (f32's quiet NaN).
  if (Value *v = replaceNaNOnNeon(b, ordered, 0x7fc00000u, math))
    return v;
  Value *unordered = b.CreateFCmpUNO(x, y);
  Value *nan = constLike(x, std::numeric_limits<double>::quiet_NaN());
  return b.CreateSelect(unordered, nan, ordered);
}

} // namespace

Value *emitOrderedMinMax(llvm::IRBuilder<> &b, bool isMax, Value *x, Value *y,
                         const MathTarget *math) {
  if (math && math->aarch64_neon && x->getType()->getScalarType()->isFloatTy())
    return b.CreateBinaryIntrinsic(isMax ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, x,
                                   y);
  llvm::Intrinsic::ID range = llvm::Intrinsic::not_intrinsic;
  if (math && math->has_avx512dq)
    range = avx512Form(*math, x->getType(), llvm::Intrinsic::x86_avx512_mask_range_ps_512,
                       llvm::Intrinsic::x86_avx512_mask_range_ps_256,
                       llvm::Intrinsic::x86_avx512_mask_range_ps_128);
  if (range != llvm::Intrinsic::not_intrinsic) {
    // vrangeps imm8: bits 1:0 select min (00) or max (01), bits 3:2 = 01
    // take the sign from the comparison, which orders -0 below +0. A quiet
    // NaN operand is treated as missing (the other operand is returned), so
    // NaNs still take the select: three instructions instead of seven.
    return callOnAllLanes(
        b, range, x->getType(),
        {x, y, b.getInt32(isMax ? 0x5 : 0x4), llvm::Constant::getNullValue(x->getType())});
  }
  // x86's max (x > y ? x : y) both ways round: equal operands give both,
  // whose AND (max) or OR (min) is the IEEE tie (+0 over -0; equal values
  // otherwise), and different ones give the larger twice. Lowers to two
  // maxps (minps) and an AND (OR) on every x86: five instructions with the
  // NaN select, where a select chain on three compares took seven.
  Value *xy = b.CreateSelect(isMax ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y), x, y);
  Value *yx = b.CreateSelect(isMax ? b.CreateFCmpOGT(y, x) : b.CreateFCmpOLT(y, x), y, x);
  Value *xi = asInt(b, xy), *yi = asInt(b, yx);
  return b.CreateBitCast(isMax ? b.CreateAnd(xi, yi) : b.CreateOr(xi, yi), x->getType());
}

namespace {

// Floored i32 division and modulo with x/0 = x%0 = 0 and INT_MIN/-1 = INT_MIN
// (wrapping), so no lane can trap.
Value *emitFlooredDivMod(llvm::IRBuilder<> &b, bool isMod, Value *x, Value *y) {
  Value *zero = intLike(x, 0), *one = intLike(x, 1);
  Value *yZero = b.CreateICmpEQ(y, zero);
  Value *overflow =
      b.CreateAnd(b.CreateICmpEQ(x, intLike(x, INT32_MIN)), b.CreateICmpEQ(y, intLike(x, -1)));
  Value *safeY = b.CreateSelect(b.CreateOr(yZero, overflow), one, y);
  Value *q = b.CreateSDiv(x, safeY);
  Value *r = b.CreateSub(x, b.CreateMul(q, safeY));
  // Truncated -> floored: adjust when the remainder's sign differs from y's.
  Value *adjust =
      b.CreateAnd(b.CreateICmpNE(r, zero), b.CreateICmpSLT(b.CreateXor(r, safeY), zero));
  Value *result = isMod ? b.CreateSelect(adjust, b.CreateAdd(r, safeY), r)
                        : b.CreateSelect(adjust, b.CreateSub(q, one), q);
  return b.CreateSelect(yZero, zero, result);
}

} // namespace

llvm::Type *valueType(llvm::LLVMContext &ctx, DType type, int lanes) {
  llvm::Type *element = nullptr;
  switch (type) {
  case DType::F32: element = llvm::Type::getFloatTy(ctx); break;
  case DType::I32: element = llvm::Type::getInt32Ty(ctx); break;
  case DType::Bool: element = llvm::Type::getInt1Ty(ctx); break;
  case DType::BF16:
  case DType::F16:
  case DType::I8: throw Error(Error::Kind::Compile, "internal: a value of a storage type");
  }
  return lanes == 0 ? element : llvm::FixedVectorType::get(element, lanes);
}

Value *emitUnary(llvm::IRBuilder<> &b, UnaryOp op, DType t, Value *x, const MathTarget &math) {
  bool isFloat = t == DType::F32;
  switch (op) {
  case UnaryOp::Neg: return isFloat ? b.CreateFNeg(x) : b.CreateSub(intLike(x, 0), x);
  case UnaryOp::Abs:
    if (isFloat)
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    return b.CreateSelect(b.CreateICmpSLT(x, intLike(x, 0)), b.CreateSub(intLike(x, 0), x), x);
  case UnaryOp::Exp: return emitExp(b, x, math);
  case UnaryOp::Log: return emitLog(b, x, math);
  case UnaryOp::Sqrt: return emitSqrt(b, x, math);
  case UnaryOp::Rsqrt: return emitRsqrt(b, x, math);
  case UnaryOp::Tanh: return emitTanh(b, x, math);
  case UnaryOp::Sigmoid: return emitSigmoid(b, x, math);
  case UnaryOp::Erf: return emitErf(b, x, math);
  case UnaryOp::Not: return b.CreateNot(x);
  case UnaryOp::ToF32: {
    llvm::Type *f =
        valueType(b.getContext(), DType::F32,
                  x->getType()->isVectorTy()
                      ? llvm::cast<llvm::FixedVectorType>(x->getType())->getNumElements()
                      : 0);
    return b.CreateSIToFP(x, f);
  }
  case UnaryOp::ToI32: {
    // fptosi is poison out of range; x86's answer (INT32_MIN) is defined here.
    llvm::Type *i = asInt(b, x)->getType();
    Value *inRange = b.CreateAnd(b.CreateFCmpOGE(x, constLike(x, -2147483648.0)),
                                 b.CreateFCmpOLT(x, constLike(x, 2147483648.0)));
    Value *converted = b.CreateFPToSI(x, i);
    return b.CreateSelect(inRange, converted, llvm::ConstantInt::get(i, INT32_MIN, true));
  }
  }
  return nullptr;
}

Value *emitBinary(llvm::IRBuilder<> &b, BinaryOp op, DType t, Value *x, Value *y,
                  const MathTarget *math) {
  bool isFloat = t == DType::F32;
  switch (op) {
  case BinaryOp::Add: return isFloat ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
  case BinaryOp::Sub: return isFloat ? b.CreateFSub(x, y) : b.CreateSub(x, y);
  case BinaryOp::Mul: return isFloat ? b.CreateFMul(x, y) : b.CreateMul(x, y);
  case BinaryOp::Div: return isFloat ? b.CreateFDiv(x, y) : emitFlooredDivMod(b, false, x, y);
  case BinaryOp::Mod: return emitFlooredDivMod(b, true, x, y);
  case BinaryOp::Min:
  case BinaryOp::Max: {
    bool isMax = op == BinaryOp::Max;
    if (isFloat)
      return emitIeeeMinMax(b, isMax, x, y, math);
    Value *xFirst = isMax ? b.CreateICmpSGT(x, y) : b.CreateICmpSLT(x, y);
    return b.CreateSelect(xFirst, x, y);
  }
  case BinaryOp::Lt: return isFloat ? b.CreateFCmpOLT(x, y) : b.CreateICmpSLT(x, y);
  case BinaryOp::Le: return isFloat ? b.CreateFCmpOLE(x, y) : b.CreateICmpSLE(x, y);
  case BinaryOp::Gt: return isFloat ? b.CreateFCmpOGT(x, y) : b.CreateICmpSGT(x, y);
  case BinaryOp::Ge: return isFloat ? b.CreateFCmpOGE(x, y) : b.CreateICmpSGE(x, y);
  case BinaryOp::Eq: return isFloat ? b.CreateFCmpOEQ(x, y) : b.CreateICmpEQ(x, y);
  case BinaryOp::Ne: return isFloat ? b.CreateFCmpUNE(x, y) : b.CreateICmpNE(x, y);
  case BinaryOp::And: return b.CreateAnd(x, y);
  case BinaryOp::Or: return b.CreateOr(x, y);
  }
  return nullptr;
}

Value *emitFma(llvm::IRBuilder<> &b, Value *x, Value *y, Value *z, const MathTarget &math) {
  llvm::Type *t = x->getType();
  if (math.has_fma || !t->getScalarType()->isFloatTy())
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {t}, {x, y, z});
  // Without FMA hardware LLVM would call fmaf once per lane, which kernels
  // may not import. The same correctly rounded result in double: x*y is
  // exact there (48 significant bits), the sum s is rounded to odd (an
  // inexact s gets its last bit set, moving it one ulp toward the exact
  // sum), and rounding that to float is then correctly rounded (Boldo and
  // Melquiond: rounding to odd with at least two extra bits, 53 >= 24 + 2).
  llvm::Type *d = t->getWithNewType(b.getDoubleTy());
  llvm::Type *i64 = t->getWithNewType(b.getInt64Ty());
  Value *p = b.CreateFMul(b.CreateFPExt(x, d), b.CreateFPExt(y, d));
  Value *c = b.CreateFPExt(z, d);
  Value *s = b.CreateFAdd(p, c);
  // TwoSum: s + err == p + c exactly (err is NaN when s is inf or NaN,
  // which fails the ordered compare below and leaves s alone).
  Value *v = b.CreateFSub(s, p);
  Value *err = b.CreateFAdd(b.CreateFSub(p, b.CreateFSub(s, v)), b.CreateFSub(c, v));
  Value *bits = b.CreateBitCast(s, i64);
  Value *inexactEven = b.CreateAnd(b.CreateFCmpONE(err, llvm::ConstantFP::get(d, 0.0)),
                                   b.CreateICmpEQ(b.CreateAnd(bits, llvm::ConstantInt::get(i64, 1)),
                                                  llvm::ConstantInt::get(i64, 0)));
  // Toward the exact sum: up in magnitude when err has s's sign.
  Value *sameSign =
      b.CreateICmpSGE(b.CreateXor(bits, b.CreateBitCast(err, i64)), llvm::ConstantInt::get(i64, 0));
  Value *step = b.CreateSelect(sameSign, llvm::ConstantInt::get(i64, 1),
                               llvm::ConstantInt::getSigned(i64, -1));
  Value *odd = b.CreateSelect(inexactEven, b.CreateAdd(bits, step), bits);
  return b.CreateFPTrunc(b.CreateBitCast(odd, d), t, "fma");
}

Value *emitCanonicalNaN(llvm::IRBuilder<> &b, Value *x, const MathTarget *math) {
  llvm::Type *t = x->getType();
  if (!t->getScalarType()->isFloatTy())
    return x;
  llvm::Intrinsic::ID fixup = llvm::Intrinsic::not_intrinsic;
  if (math)
    fixup = avx512Form(*math, t, llvm::Intrinsic::x86_avx512_mask_fixupimm_ps_512,
                       llvm::Intrinsic::x86_avx512_mask_fixupimm_ps_256,
                       llvm::Intrinsic::x86_avx512_mask_fixupimm_ps_128);
  if (fixup != llvm::Intrinsic::not_intrinsic) {
    // vfixupimmps, one instruction: the table maps both NaN classes (nibbles
    // 0 and 1) to token 3, x86's default NaN, and the other six classes to
    // token 1, the operand itself.
    Value *table = llvm::ConstantInt::get(
        llvm::VectorType::getInteger(llvm::cast<llvm::VectorType>(t)), 0x11111133u);
    Value *fixed = callOnAllLanes(b, fixup, t, {x, x, table, b.getInt32(0)});
    fixed->setName("canonical");
    return fixed;
  }
  if (Value *v = replaceNaNOnNeon(b, x, kCanonicalNaNBits, math))
    return v;
  Value *nan = llvm::ConstantFP::get(
      t, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, kCanonicalNaNBits)));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), nan, x, "canonical");
}

namespace {

// An integer constant of x's shape (a scalar or a splat).
Value *like(Value *x, uint64_t value) { return llvm::ConstantInt::get(x->getType(), value); }

// The integer or f32 type of x's shape, with `element` elements.
llvm::Type *shaped(llvm::Type *t, llvm::Type *element) {
  if (auto *v = llvm::dyn_cast<llvm::VectorType>(t))
    return llvm::VectorType::get(element, v);
  return element;
}

// bf16 rounding with AVX512_BF16's vcvtneps2bf16 (nearest-even, NaN's top
// bits kept), or null where the target lacks it for x's width. The
// instruction flushes denormal inputs to zero, so these are made normal
// first: setting the lowest exponent bit adds 2^-126 exactly (a denormal's
// exponent field is 0), the rounded result is then 0x0080 more, even in
// its last bit, and subtracting that back gives the denormal's own
// nearest-even rounding (0x0080 when it rounds up to the smallest normal).
// Four instructions where the integer form takes six to seven.
Value *roundBF16Converting(llvm::IRBuilder<> &b, Value *x, const MathTarget &math) {
  auto *v = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!math.has_avx512bf16 || !v)
    return nullptr;
  unsigned lanes = v->getNumElements();
  if (lanes != 16 && !(math.has_avx512vl && (lanes == 8 || lanes == 4)))
    return nullptr;
  llvm::Intrinsic::ID fpclass = lanes == 16  ? llvm::Intrinsic::x86_avx512_fpclass_ps_512
                                : lanes == 8 ? llvm::Intrinsic::x86_avx512_fpclass_ps_256
                                             : llvm::Intrinsic::x86_avx512_fpclass_ps_128;
  Value *denormal = b.CreateIntrinsic(fpclass, {}, {x, b.getInt32(0x20)}, nullptr, "denormal");
  Value *bits = b.CreateBitCast(x, shaped(v, b.getInt32Ty()));
  Value *normal = b.CreateBitCast(
      b.CreateSelect(denormal, b.CreateOr(bits, like(bits, 0x00800000)), bits), v);
  Value *rounded = nullptr;
  if (lanes == 4) { // the 128-bit form fills 8 lanes, the upper 4 with zeros
    llvm::Type *bf16x8 = llvm::FixedVectorType::get(b.getBFloatTy(), 8);
    Value *all = b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_mask_cvtneps2bf16_128, {},
                                   {normal, llvm::Constant::getNullValue(bf16x8),
                                    llvm::Constant::getAllOnesValue(shaped(v, b.getInt1Ty()))});
    rounded = b.CreateShuffleVector(all, {0, 1, 2, 3});
  } else {
    rounded = b.CreateIntrinsic(lanes == 16 ? llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_512
                                            : llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_256,
                                {}, {normal});
  }
  rounded = b.CreateBitCast(rounded, shaped(v, b.getInt16Ty())); // LLVM types it bfloat
  return b.CreateSelect(denormal, b.CreateSub(rounded, like(rounded, 0x0080)), rounded,
                        "bf16.round");
}

// f16 bits (i32 lanes) to f32 without F16C: the steps of lanejit::widenF16.
Value *widenF16Bits(llvm::IRBuilder<> &b, Value *x) {
  llvm::Type *f32 = shaped(x->getType(), b.getFloatTy());
  Value *sign = b.CreateShl(b.CreateAnd(x, like(x, 0x8000)), like(x, 16));
  Value *magnitude = b.CreateAnd(x, like(x, 0x7fff));
  Value *exponent = b.CreateAnd(x, like(x, 0x7c00));
  Value *mantissa = b.CreateAnd(x, like(x, 0x3ff));
  Value *shifted = b.CreateShl(magnitude, like(x, 13));
  Value *normal = b.CreateAdd(shifted, like(x, 112u << 23));
  Value *quiet =
      b.CreateSelect(b.CreateICmpNE(mantissa, like(x, 0)), like(x, 0x400000), like(x, 0));
  Value *special = b.CreateOr(b.CreateAdd(shifted, like(x, 224u << 23)), quiet);
  // Subnormals: mantissa x 2^-24, exact in f32.
  Value *tiny = b.CreateFMul(b.CreateUIToFP(mantissa, f32), llvm::ConstantFP::get(f32, 0x1p-24));
  Value *bits = b.CreateSelect(b.CreateICmpEQ(exponent, like(x, 0x7c00)), special, normal);
  bits = b.CreateSelect(b.CreateICmpEQ(exponent, like(x, 0)),
                        b.CreateBitCast(tiny, x->getType()), bits);
  return b.CreateBitCast(b.CreateOr(bits, sign), f32);
}

// f32 to f16 bits (i32 lanes) without F16C: the steps of lanejit::roundToF16
// for a canonical NaN. Subnormal results add 0.5: the sum's last place is
// 2^-24, the f16 subnormal step, so the f32 addition rounds to even there.
Value *roundF16Bits(llvm::IRBuilder<> &b, Value *x) {
  llvm::Type *i32 = shaped(x->getType(), b.getInt32Ty());
  Value *bits = b.CreateBitCast(x, i32);
  Value *sign = b.CreateAnd(b.CreateLShr(bits, like(bits, 16)), like(bits, 0x8000));
  Value *a = b.CreateAnd(bits, like(bits, 0x7fffffff));
  Value *odd = b.CreateAnd(b.CreateLShr(a, like(a, 13)), like(a, 1));
  Value *normal = b.CreateLShr(
      b.CreateSub(b.CreateAdd(a, b.CreateAdd(odd, like(a, 0x0fff))), like(a, 112u << 23)),
      like(a, 13));
  Value *half = llvm::ConstantFP::get(x->getType(), 0.5);
  Value *sum = b.CreateFAdd(b.CreateBitCast(a, x->getType()), half);
  Value *tiny = b.CreateSub(b.CreateBitCast(sum, i32), like(a, 0x3f000000));
  Value *r = b.CreateSelect(b.CreateICmpULT(a, like(a, 0x38800000)), tiny, normal);
  r = b.CreateSelect(b.CreateICmpUGE(a, like(a, 0x477ff000)), like(a, 0x7c00), r);
  r = b.CreateSelect(b.CreateICmpUGT(a, like(a, 0x7f800000)), like(a, 0x7e00), r);
  return b.CreateOr(r, sign);
}

} // namespace

llvm::Type *memoryType(llvm::LLVMContext &ctx, DType storage, int lanes) {
  if (!isStorageOnly(storage))
    return valueType(ctx, storage, lanes);
  llvm::Type *element = storage == DType::I8 ? llvm::Type::getInt8Ty(ctx)
                                             : llvm::Type::getInt16Ty(ctx);
  return lanes == 0 ? element : llvm::FixedVectorType::get(element, lanes);
}

Value *emitWiden(llvm::IRBuilder<> &b, Value *loaded, DType storage, const MathTarget *math) {
  if (!isStorageOnly(storage))
    return loaded;
  if (storage == DType::I8) // every i8 is an f32
    return b.CreateSIToFP(loaded, shaped(loaded->getType(), b.getFloatTy()), "i8.widen");
  llvm::Type *i32 = shaped(loaded->getType(), b.getInt32Ty());
  if (storage == DType::BF16) {
    Value *wide = b.CreateZExt(loaded, i32);
    return b.CreateBitCast(b.CreateShl(wide, like(wide, 16)),
                           shaped(loaded->getType(), b.getFloatTy()), "bf16.widen");
  }
  if (math && math->has_f16c)
    return b.CreateFPExt(b.CreateBitCast(loaded, shaped(loaded->getType(), b.getHalfTy())),
                         shaped(loaded->getType(), b.getFloatTy()), "f16.widen");
  return widenF16Bits(b, b.CreateZExt(loaded, i32));
}

Value *emitStored(llvm::IRBuilder<> &b, Value *x, DType storage, const MathTarget *math) {
  if (storage == DType::I8) // every NaN stores 0: no canonical NaN needed
    return emitRoundCanonical(b, x, storage, math);
  return emitRoundCanonical(b, emitCanonicalNaN(b, x, math), storage, math);
}

Value *emitRoundCanonical(llvm::IRBuilder<> &b, Value *x, DType storage, const MathTarget *math) {
  if (!isStorageOnly(storage))
    return x;
  if (storage == DType::I8) {
    // lanejit::roundToI8: clamp to +-127 (ordered compares leave a NaN),
    // NaN to 0, then nearest-even; each step exact, so the conversion to
    // an integer is too.
    llvm::Type *t = x->getType();
    Value *hi = llvm::ConstantFP::get(t, 127.0), *lo = llvm::ConstantFP::get(t, -127.0);
    Value *c = b.CreateSelect(b.CreateFCmpOGT(x, hi), hi, x);
    c = b.CreateSelect(b.CreateFCmpOLT(c, lo), lo, c);
    c = b.CreateSelect(b.CreateFCmpUNO(x, x), llvm::ConstantFP::get(t, 0.0), c);
    Value *r = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, c);
    return b.CreateFPToSI(r, shaped(t, b.getInt8Ty()), "i8.round");
  }
  llvm::Type *i16 = shaped(x->getType(), b.getInt16Ty());
  if (storage == DType::BF16 && math)
    if (Value *v = roundBF16Converting(b, x, *math))
      return v;
  if (storage == DType::BF16) {
    // Nearest-even: add just under half a bf16 ulp, plus one when the kept
    // part is odd; the canonical NaN 0xffc00000 gives 0xffc0 the same way.
    Value *bits = b.CreateBitCast(x, shaped(x->getType(), b.getInt32Ty()));
    Value *odd = b.CreateAnd(b.CreateLShr(bits, like(bits, 16)), like(bits, 1));
    Value *rounded = b.CreateAdd(bits, b.CreateAdd(odd, like(bits, 0x7fff)));
    return b.CreateTrunc(b.CreateLShr(rounded, like(bits, 16)), i16, "bf16.round");
  }
  if (math && math->has_f16c) // vcvtps2ph in the default (nearest-even) mode
    return b.CreateBitCast(b.CreateFPTrunc(x, shaped(x->getType(), b.getHalfTy())), i16,
                           "f16.round");
  return b.CreateTrunc(roundF16Bits(b, x), i16, "f16.round");
}

llvm::Constant *reductionIdentity(llvm::Type *type, ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean: return llvm::ConstantFP::get(type, -0.0);
  case ReduceOp::Max: return llvm::ConstantFP::get(type, -std::numeric_limits<double>::infinity());
  case ReduceOp::Min: return llvm::ConstantFP::get(type, std::numeric_limits<double>::infinity());
  }
  return nullptr;
}

Value *emitReductionStep(llvm::IRBuilder<> &b, ReduceOp op, Value *acc, Value *x,
                         const MathTarget *math) {
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean: return b.CreateFAdd(acc, x);
  case ReduceOp::Max: return emitIeeeMinMax(b, true, acc, x, math);
  case ReduceOp::Min: return emitIeeeMinMax(b, false, acc, x, math);
  }
  return nullptr;
}

// With the sign bit clear, the order of floats is the order of their bits
// as integers, +inf's below every NaN's; the max's identity -inf is the
// one negative value the steps meet (an accumulator's start, a tail's
// lanes past the row). So the signed integer max is the IEEE maximum for
// every operand but NaN, and a NaN when some operand is one: a NaN of
// another payload than emitIeeeMinMax's, which no output sees (stores
// canonicalise, compares and arithmetic read any NaN alike). One vpmaxsd
// or smax for vrangeps, a compare and a blend (or fmax, facge and bif).
Value *emitReductionStepOf(llvm::IRBuilder<> &b, const Node &reduction, Value *acc, Value *x,
                           bool integerAbsMax, const MathTarget *math) {
  const Node &operand = *reduction.args[0];
  bool absMax = integerAbsMax && reduction.reduceOp() == ReduceOp::Max &&
                operand.kind == NodeKind::Unary &&
                operand.unaryOp() == UnaryOp::Abs && acc->getType()->isFPOrFPVectorTy();
  if (!absMax)
    return emitReductionStep(b, reduction.reduceOp(), acc, x, math);
  llvm::Type *t = acc->getType();
  Value *bits = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, asInt(b, acc), asInt(b, x));
  return b.CreateBitCast(bits, t, "absmax");
}

} // namespace lanejit::codegen

namespace lanejit::codegen {

llvm::Value *emitElementwise(llvm::IRBuilder<> &b, const Node &n,
                             const std::vector<llvm::Value *> &x, const MathTarget &math) {
  switch (n.kind) {
  case NodeKind::Unary: return emitUnary(b, n.unaryOp(), n.args[0]->type, x.at(0), math);
  case NodeKind::Binary:
    return emitBinary(b, n.binaryOp(), n.args[0]->type, x.at(0), x.at(1), &math);
  case NodeKind::Select: return b.CreateSelect(x.at(0), x.at(1), x.at(2));
  case NodeKind::Fma: return emitFma(b, x.at(0), x.at(1), x.at(2), math);
  default:
    throw Error(Error::Kind::Compile,
                "internal: no elementwise form for node kind " + std::string(name(n.kind)));
  }
}

} // namespace lanejit::codegen
