// Inline vector math as LLVM IR (see math.h; algorithms in docs/math.md).
//
// Everything is built from fadd/fsub/fmul/fdiv, llvm.fma (only when the
// target has it), fcmp/select, llvm.fabs/copysign/sqrt and integer ops on the
// bits, all of which lower to plain instructions on x86. Polynomial
// coefficients are minimax fits (weighted Remez, relative error) rounded to
// f32; the tests sweep the f32 range to hold each function to its bound.
#include "codegen/math.h"

#include "codegen/avx512_calls.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

namespace lanejit::codegen {
namespace {

using llvm::Value;

// Builds the per-lane operations for one value type: `float` or `<W x float>`.
// Constants are splats, so the emitted code is the same for every width.
// Clears the builder's fast-math flags while it lives: a caller's flags
// must not leak into (and change the bits of) these sequences.
class Ops {
public:
  Ops(llvm::IRBuilder<> &b, Value *x, const MathTarget &t)
      : ir(b), guard_(b), t_(t), f_(x->getType()), i_(intType(x->getType())) {
    b.clearFastMathFlags();
  }

  llvm::IRBuilder<> &ir;

  Value *c(float v) const { return llvm::ConstantFP::get(f_, v); }
  Value *ci(int32_t v) const { return llvm::ConstantInt::get(i_, static_cast<uint32_t>(v), true); }
  Value *bits(Value *v) const { return ir.CreateBitCast(v, i_); }
  Value *real(Value *v) const { return ir.CreateBitCast(v, f_); }

  Value *add(Value *x, Value *y) const { return ir.CreateFAdd(x, y); }
  Value *sub(Value *x, Value *y) const { return ir.CreateFSub(x, y); }
  Value *mul(Value *x, Value *y) const { return ir.CreateFMul(x, y); }
  Value *div(Value *x, Value *y) const { return ir.CreateFDiv(x, y); }
  // x * y + z: one rounding with FMA, two without.
  Value *mulAdd(Value *x, Value *y, Value *z) const {
    if (t_.has_fma)
      return ir.CreateIntrinsic(llvm::Intrinsic::fma, {f_}, {x, y, z});
    return add(mul(x, y), z);
  }
  // Horner's rule, coefficients from the highest degree down.
  Value *horner(Value *x, std::initializer_list<float> coeffs) const {
    auto it = coeffs.begin();
    Value *acc = c(*it++);
    for (; it != coeffs.end(); ++it)
      acc = mulAdd(acc, x, c(*it));
    return acc;
  }
  bool fused() const { return t_.has_fma; }
  Value *fabs(Value *x) const { return ir.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  Value *copysign(Value *mag, Value *sign) const {
    return ir.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  // select(cmp, y, x): keeps x (including NaN) wherever the compare is false.
  Value *pick(Value *cmp, Value *y, Value *x) const { return ir.CreateSelect(cmp, y, x); }
  // The vscalefps intrinsic for this packet width, when the target has one.
  llvm::Intrinsic::ID scalef() const {
    return avx512Form(t_, f_, llvm::Intrinsic::x86_avx512_mask_scalef_ps_512,
                      llvm::Intrinsic::x86_avx512_mask_scalef_ps_256,
                      llvm::Intrinsic::x86_avx512_mask_scalef_ps_128);
  }
  // p * 2^n rounded once, n an integer-valued float: vscalefps, all lanes
  // on, current rounding mode.
  Value *scalef(llvm::Intrinsic::ID id, Value *p, Value *n) const {
    return callOnAllLanes(ir, id, f_, {p, n, llvm::Constant::getNullValue(f_)});
  }

private:
  static llvm::Type *intType(llvm::Type *f) {
    llvm::Type *i32 = llvm::Type::getInt32Ty(f->getContext());
    if (auto *v = llvm::dyn_cast<llvm::VectorType>(f))
      return llvm::VectorType::get(i32, v->getElementCount());
    return i32;
  }

  llvm::IRBuilderBase::FastMathFlagGuard guard_;
  const MathTarget &t_;
  llvm::Type *f_;
  llvm::Type *i_;
};

// ln2 split for Cody-Waite reduction: kLn2Hi has 15 significant bits, so
// n * kLn2Hi is exact for |n| < 512 and x - n * kLn2Hi is exact (Sterbenz).
constexpr float kLn2Hi = 0x1.62e4p-1f;
constexpr float kLn2Lo = 0x1.7f7d1cp-20f;

// e^x = e^r * 2^n with r = x - n * ln2, |r| <= ln2 / 2.
Value *exp(const Ops &o, Value *x) {
  llvm::IRBuilder<> &b = o.ir;
  // Clamp so that n stays in [-150, 128]: beyond, the result is 0 or inf
  // anyway (e^-104 < 2^-150, e^88.8 > 2^128). NaN fails both compares.
  x = o.pick(b.CreateFCmpOGT(x, o.c(88.8f)), o.c(88.8f), x);
  x = o.pick(b.CreateFCmpOLT(x, o.c(-104.0f)), o.c(-104.0f), x);

  // n = rint(x / ln2) by the shifter trick: adding 1.5 * 2^23 + 254 rounds
  // to an integer and leaves m = n + 254 (in [104, 382]) in the low bits.
  const float shifter = 0x1.8p23f + 254.0f;
  Value *t = o.mulAdd(x, o.c(0x1.715476p+0f), o.c(shifter));
  Value *n = o.sub(t, o.c(shifter));
  Value *r = o.mulAdd(n, o.c(-kLn2Hi), x);
  r = o.mulAdd(n, o.c(-kLn2Lo), r);

  // e^r = 1 + r + r^2 * Q(r), Q of degree 4 (rel. error 2^-28.3).
  Value *q =
      o.horner(r, {0x1.6a23a8p-10f, 0x1.123a36p-7f, 0x1.5558f4p-5f, 0x1.55549p-3f, 0x1.fffffcp-2f});
  Value *p = o.fused()
                 // One rounding at the end: 1 + r * (1 + r * Q).
                 ? o.mulAdd(o.mulAdd(q, r, o.c(1.0f)), r, o.c(1.0f))
                 // Without FMA, adding the small r^2 * Q to r first is more
                 // accurate (0.99 instead of 1.15 ULP).
                 : o.add(o.mulAdd(o.mul(r, r), q, r), o.c(1.0f));

  // p * 2^n rounded once. On AVX-512 vscalefps does exactly that (the
  // exact product, one rounding, gradual underflow), so it gives the bits
  // of the generic form below in one instruction.
  if (llvm::Intrinsic::ID id = o.scalef(); id != llvm::Intrinsic::not_intrinsic)
    return o.scalef(id, p, n);

  // 2^n as two normal factors 2^floor(n/2) * 2^ceil(n/2): the first product
  // is exact, the second rounds once, so results in the denormal range
  // underflow gradually and overflow happens exactly when p * 2^n rounds
  // past FLT_MAX. With u the bits of t, m = n + 254 sits in u's low 9 bits
  // (the high ones shift out): (u >> 1) << 23 is 2^(floor(m/2) - 127), and
  // (u << 23) minus that is 2^(ceil(m/2) - 127).
  Value *u = o.bits(t);
  Value *s1 = b.CreateShl(b.CreateLShr(u, o.ci(1)), o.ci(23));
  Value *s2 = b.CreateSub(b.CreateShl(u, o.ci(23)), s1);
  return o.mul(o.mul(p, o.real(s1)), o.real(s2));
}

} // namespace

Value *emitExp(llvm::IRBuilder<> &b, Value *x, const MathTarget &t) {
  return exp(Ops(b, x, t), x);
}

Value *emitLog(llvm::IRBuilder<> &b, Value *x, const MathTarget &t) {
  Ops o(b, x, t);
  // Denormal inputs: scale by 2^23 into the normal range, subtract 23 from k.
  Value *tiny = b.CreateFCmpOLT(x, o.c(0x1p-126f));
  Value *xs = o.pick(tiny, o.mul(x, o.c(0x1p23f)), x);
  Value *bias = o.pick(tiny, o.c(-23.0f), o.c(0.0f));

  // x = 2^k * m with m in [sqrt(1/2), sqrt(2)): subtracting the bits of
  // sqrt(1/2) moves the exponent boundary to that point.
  const int32_t sqrtHalf = 0x3f3504f3;
  Value *ix = b.CreateSub(o.bits(xs), o.ci(sqrtHalf));
  Value *k = o.add(b.CreateSIToFP(b.CreateAShr(ix, o.ci(23)), x->getType()), bias);
  Value *m = o.real(b.CreateAdd(b.CreateAnd(ix, o.ci(0x007fffff)), o.ci(sqrtHalf)));
  Value *f = o.sub(m, o.c(1.0f)); // exact (Sterbenz)

  // log1p(f) = f - f^2/2 + f^3 * P(f), P of degree 7 (rel. error 2^-27.4).
  Value *pf = o.horner(f, {-0x1.38b5a6p-4f, 0x1.055b84p-3f, -0x1.0d8546p-3f, 0x1.22da1ap-3f,
                           -0x1.547244p-3f, 0x1.99a008p-3f, -0x1.000226p-2f, 0x1.555554p-2f});
  Value *f2 = o.mul(f, f);
  // Small terms first, then f, then the exact k * ln2hi last.
  Value *lo = o.mulAdd(o.mul(f2, f), pf, o.mul(k, o.c(kLn2Lo)));
  Value *s = o.add(o.sub(lo, o.mul(f2, o.c(0.5f))), f);
  Value *y = o.add(s, o.mul(k, o.c(kLn2Hi)));

  // +inf and NaN give x; x < 0 gives NaN; ±0 gives -inf.
  const float inf = std::numeric_limits<float>::infinity();
  y = o.pick(b.CreateFCmpUGE(x, o.c(inf)), x, y);
  y = o.pick(b.CreateFCmpOLT(x, o.c(0.0f)), o.c(std::numeric_limits<float>::quiet_NaN()), y);
  return o.pick(b.CreateFCmpOEQ(x, o.c(0.0f)), o.c(-inf), y);
}

Value *emitTanh(llvm::IRBuilder<> &b, Value *x, const MathTarget &t) {
  Ops o(b, x, t);
  // a = min(|x|, 10): tanh rounds to 1 from 9.0109138 on, and the clamp
  // keeps 2^n below in range. NaN fails the compare and passes through.
  Value *a = o.fabs(x);
  a = o.pick(b.CreateFCmpOGT(a, o.c(10.0f)), o.c(10.0f), a);

  // 2a = n * ln2 + 2r, n = rint(2a / ln2) in [0, 29], |r| <= ln2 / 4, by
  // the shifter trick; bias 126 leaves n - 1 + 127 in t's low bits.
  const float shifter = 0x1.8p23f + 126.0f;
  Value *t2 = o.mulAdd(a, o.c(0x1.715476p+1f), o.c(shifter));
  Value *n = o.sub(t2, o.c(shifter));
  // With FMA one step is enough: the rounded ln2 / 2 is off by 1e-9 per
  // n, while the tolerance grows with e^2a. Without FMA, Cody-Waite.
  Value *r = o.fused() ? o.mulAdd(n, o.c(-0x1.62e43p-2f), a)
                       : o.mulAdd(n, o.c(-kLn2Lo / 2), o.mulAdd(n, o.c(-kLn2Hi / 2), a));

  // h = (e^2a - 1) / 2 = s * (e^2r - 1) + (s - 1/2), s = 2^(n-1), with
  // e^2r - 1 = 2r + r^2 * K(r), K of degree 4 (rel. error 2^-26.1). The
  // exact 2s * r + (s - 1/2) is added first and r^2 * s * K last, so for
  // n = 1 (h = 1/2 + (e^2r - 1), e^2r - 1 down to -0.29) no rounding of
  // e^2r - 1 is magnified by the cancellation.
  Value *k = o.horner(r, {0x1.6bebaep-4f, 0x1.1229b4p-2f, 0x1.555678p-1f, 0x1.5554b0p+0f, 2.0f});
  Value *s = o.real(b.CreateShl(o.bits(t2), o.ci(23)));
  Value *inner = o.mulAdd(o.add(s, s), r, o.sub(s, o.c(0.5f)));
  Value *h = o.mulAdd(o.mul(o.mul(r, r), s), k, inner);

  // tanh(a) = h / (1 + h) = 1 - q, q = 1 / (1 + h). From a = 0.625 on,
  // q < 0.47 and its errors shrink in the subtraction; q < 2^-25 from
  // 9.0109138 on gives exactly 1, as correctly rounded tanhf does.
  Value *q = o.div(o.c(1.0f), o.add(o.c(1.0f), h));
  Value *large = o.sub(o.c(1.0f), q);
  // Below, 1 - q cancels: correct it by the residual of y * (1 + h) = h,
  // rho = (h - y) - y * h (h - y exact by Sterbenz while h <= 1), as
  // y + q * rho. The errors of q drop out to first order; h's own error
  // (divided by 1 + h) and the last rounding remain.
  Value *rho = o.mulAdd(b.CreateFNeg(large), h, o.sub(h, large));
  Value *small = o.mulAdd(q, rho, large);
  Value *y = o.pick(b.CreateFCmpOLT(a, o.c(0.625f)), small, large);
  return o.copysign(y, x);
}

Value *emitSigmoid(llvm::IRBuilder<> &b, Value *x, const MathTarget &t) {
  Ops o(b, x, t);
  // e = e^-|x| <= 1 never overflows: 1 / (1 + e) for x >= 0 and
  // e / (1 + e) for x < 0, so large negative x gives tiny results, not 0.
  Value *e = exp(o, b.CreateFNeg(o.fabs(x)));
  Value *neg = b.CreateFCmpOLT(x, o.c(0.0f));
  Value *den = o.add(e, o.c(1.0f));
  Value *q = o.div(o.pick(neg, e, o.c(1.0f)), den);
  // Rounding 1 + e alone can cost a full ULP. Its exact error is
  // d = (den - 1) - e (Fast2Sum, e <= 1); correct to first order:
  // num / (den - d) ~ q + q * d / den, with 1 / den ~ 1 - q for x < 0 and
  // q for x >= 0. This takes the worst case from 2.3 to under 2 ULP.
  Value *d = o.sub(o.sub(den, o.c(1.0f)), e);
  Value *inv = o.pick(neg, o.sub(o.c(1.0f), q), q);
  return o.mulAdd(o.mul(q, d), inv, q);
}

Value *emitErf(llvm::IRBuilder<> &b, Value *x, const MathTarget &t) {
  Ops o(b, x, t);
  Value *a = o.fabs(x);
  // |x| < 1: x + x * R(x^2), R of degree 6 (odd degree 13; relative error
  // of erf(x)/x below 2^-29.6). The final multiply-add rounds once, and R
  // is small (|R| < 0.16), so its rounding error barely reaches the result.
  Value *t2 = o.mul(a, a);
  Value *r = o.horner(t2, {0x1.496a08p-14f, -0x1.a3f6dcp-11f, 0x1.5405aap-8f, -0x1.b7f90cp-6f,
                           0x1.ce2cf8p-4f, -0x1.81273ep-2f, 0x1.06eba8p-3f});
  Value *small = o.mulAdd(a, r, a);
  // 1 <= |x| < 4: 1 - e^G(|x| - 2.5), G of degree 10 fitting log(erfc)
  // (absolute error 2^-29.2). erfc <= 0.16 here, so errors in e^G shrink
  // in the subtraction. From 4 on (NaN fails the compare) erf rounds to 1.
  Value *a4 = o.pick(b.CreateFCmpOGT(a, o.c(4.0f)), o.c(4.0f), a);
  Value *s = o.sub(a4, o.c(2.5f)); // exact: Sterbenz, or |s| in [1.25, 1.5]
  Value *g = o.horner(s, {-0x1.78512cp-25f, -0x1.1b2b50p-24f, 0x1.f36c1cp-20f, -0x1.b363bcp-17f,
                          0x1.4294aep-14f, -0x1.b924e4p-12f, 0x1.1bd7cep-9f, -0x1.63cce4p-7f,
                          -0x1.e3460ap-1f, -0x1.569252p+2f, -0x1.f3a2dcp+2f});
  Value *large = o.sub(o.c(1.0f), exp(o, g));
  Value *y = o.pick(b.CreateFCmpOLT(a, o.c(1.0f)), small, large);
  return o.copysign(y, x);
}

Value *emitSqrt(llvm::IRBuilder<> &b, Value *x, const MathTarget &) {
  llvm::IRBuilderBase::FastMathFlagGuard guard(b);
  b.clearFastMathFlags();
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
}

Value *emitRsqrt(llvm::IRBuilder<> &b, Value *x, const MathTarget &t) {
  Ops o(b, x, t);
  return o.div(o.c(1.0f), b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
}

} // namespace lanejit::codegen
