// Inline vector math (src/codegen/math.cpp) against double-precision libm.
//
// A tiny LLJIT harness compiles `void f(const float *in, float *out, i64 n)`
// that applies one emitter to packets of W lanes (W = 1 is the scalar form).
// Each function is swept over every k-th f32 bit pattern plus special
// values, with and without FMA, and must stay within its documented ULP
// bound, give exact special results, and give the same bits for every W.
#include "codegen/math.h"

#include <gtest/gtest.h>

#include "jit/host_target.h"
#include "jit/machine.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

namespace lanejit::codegen {
namespace {

using Emitter = llvm::Value *(*)(llvm::IRBuilder<> &, llvm::Value *, const MathTarget &);
using Kernel = void (*)(const float *, float *, int64_t);

// Whether the host has an LLVM feature ("fma", "avx512f", ...).
bool hostHas(const char *feature) {
  llvm::StringMap<bool> raw;
  return llvm::sys::getHostCPUFeatures(raw) && raw.lookup(feature);
}

// The machine lanejit's own JIT uses for the host (jit/machine.h).
llvm::orc::JITTargetMachineBuilder hostMachine() {
  const jit::HostTarget &host = jit::hostTarget();
  return jit::machineBuilder(host.triple, host.cpu, host.features);
}

// Emits f(in, out, n): out[i..i+W) = emit(in[i..i+W)) for i = 0, W, ... < n.
std::unique_ptr<llvm::Module> buildModule(llvm::LLVMContext &ctx, Emitter emit, int lanes,
                                          const MathTarget &t) {
  auto m = std::make_unique<llvm::Module>("math", ctx);
  llvm::Type *f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *packet = lanes == 1 ? f32 : llvm::FixedVectorType::get(f32, lanes);
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, i64}, false),
      llvm::Function::ExternalLinkage, "f", *m);
  llvm::Value *in = fn->getArg(0), *out = fn->getArg(1), *n = fn->getArg(2);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto *exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  llvm::IRBuilder<> b(entry);
  b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode *i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value *x = b.CreateAlignedLoad(packet, b.CreateGEP(f32, in, i), llvm::Align(4));
  // A caller's fast-math flags must not reach the emitted math.
  b.setFastMathFlags(llvm::FastMathFlags::getFast());
  llvm::Value *y = emit(b, x, t);
  b.clearFastMathFlags();
  b.CreateAlignedStore(y, b.CreateGEP(f32, out, i), llvm::Align(4));
  llvm::Value *next = b.CreateAdd(i, b.getInt64(lanes));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, n), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return m;
}

// Owns one LLJIT; each compile() adds a fresh dylib.
class Jit {
public:
  Jit() {
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(hostMachine()).create();
    if (!jit) {
      ADD_FAILURE() << llvm::toString(jit.takeError());
      return;
    }
    jit_ = std::move(*jit);
  }

  Kernel compile(Emitter emit, int lanes, const MathTarget &t) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = buildModule(*ctx, emit, lanes, t);
    EXPECT_FALSE(llvm::verifyModule(*m, &llvm::errs()));
    auto &lib = jit_->getExecutionSession().createBareJITDylib("m" + std::to_string(count_++));
    if (auto err = jit_->addIRModule(lib, {std::move(m), std::move(ctx)})) {
      ADD_FAILURE() << llvm::toString(std::move(err));
      return nullptr;
    }
    auto sym = jit_->lookup(lib, "f");
    if (!sym) {
      ADD_FAILURE() << llvm::toString(sym.takeError());
      return nullptr;
    }
    return sym->toPtr<Kernel>();
  }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  int count_ = 0;
};

Jit &jit() {
  static Jit instance;
  return instance;
}

std::vector<int> widths() {
  std::vector<int> w = {1, 4, 8};
  if (hostHas("avx512f"))
    w.push_back(16);
  return w;
}

// Each FMA setting, and with AVX-512 also each with vscalefps (which must
// give the same bits as without: checked by the width sweep, whose scalar
// form never uses it, and by MathExp.ScalefSameBitsExhaustiveWhenAsked).
std::vector<MathTarget> targets() {
  std::vector<MathTarget> t = {MathTarget{false}};
  if (hostHas("fma"))
    t.push_back(MathTarget{true});
  if (hostHas("avx512f"))
    for (size_t i = 0, n = t.size(); i < n; ++i)
      t.push_back(MathTarget{t[i].has_fma, true, hostHas("avx512vl")});
  return t;
}

std::string describe(const MathTarget &t) {
  return std::string("fma=") + (t.has_fma ? "1" : "0") + (t.has_avx512f ? " scalef" : "");
}

// Error of `got` in units of the last place of the exact value `ref` (the
// spacing of f32 in ref's binade, 2^-149 in and below the denormal range).
// A result that must overflow, or a NaN, must match exactly (else infinity).
double ulpError(float got, double ref) {
  if (std::isnan(ref))
    return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(static_cast<float>(ref)))
    return got == static_cast<float>(ref) ? 0 : INFINITY;
  if (!std::isfinite(got))
    return INFINITY;
  int e = 0;
  std::frexp(ref, &e); // |ref| in [2^(e-1), 2^e)
  double ulp = std::ldexp(1.0, std::max(e - 1, -126) - 23);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

float bitsToFloat(uint32_t u) {
  return std::bit_cast<float>(u);
}

std::vector<float> specialValues() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, inf, -inf, NAN, -NAN, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX,
                          0x1p-149f, -0x1p-149f, 1.0f, -1.0f, 0.5f, 2.0f, 0x1p-126f * 0.75f,
                          // exp: overflow threshold, denormal range, underflow to 0.
                          88.72283172607421875f, 88.72283935546875f, 88.0f, 89.0f, -87.33654f,
                          -88.0f, -100.0f, -103.27893f, -103.972084f, -104.0f, -150.0f,
                          // tanh/sigmoid: branch boundaries and saturation.
                          0.6f, 0.625f, 9.0f, 9.0109138f, 20.0f, 1e-3f, 1e-20f};
  const size_t base = v.size();
  for (size_t i = 0; i < base; ++i)
    if (std::isfinite(v[i]))
      for (float d : {inf, -inf}) {
        v.push_back(std::nextafter(v[i], d));
        v.push_back(-std::nextafter(v[i], d));
      }
  return v;
}

// Every `stride`-th bit pattern (stride odd, so every residue appears) plus
// the special values, padded to a multiple of 16 lanes.
std::vector<float> sweepInputs(uint32_t stride) {
  std::vector<float> v = specialValues();
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += stride)
    v.push_back(bitsToFloat(static_cast<uint32_t>(u)));
  while (v.size() % 16)
    v.push_back(1.0f);
  return v;
}

const std::vector<float> &inputs() {
  static const std::vector<float> v = sweepInputs(251); // ~17.1M values
  return v;
}

bool sameBits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Runs `emit` at every width and FMA setting over the sweep: max ULP error
// against `ref` <= bound, and the same bits as the scalar form.
void checkAccuracy(Emitter emit, double (*ref)(double), double bound) {
  const std::vector<float> &in = inputs();
  std::vector<double> want(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    want[i] = ref(in[i]);
  for (const MathTarget &t : targets()) {
    std::vector<float> scalar(in.size()), out(in.size());
    Kernel f = jit().compile(emit, 1, t);
    ASSERT_NE(f, nullptr);
    f(in.data(), scalar.data(), static_cast<int64_t>(in.size()));
    double worst = 0;
    float worstAt = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      double e = ulpError(scalar[i], want[i]);
      if (!(e <= worst))
        worst = e, worstAt = in[i];
    }
    EXPECT_LE(worst, bound) << describe(t) << " at x=" << worstAt << " (" << std::hexfloat
                            << worstAt << ")";
    for (int w : widths()) {
      if (w == 1)
        continue;
      Kernel g = jit().compile(emit, w, t);
      ASSERT_NE(g, nullptr);
      std::fill(out.begin(), out.end(), 0.0f);
      g(in.data(), out.data(), static_cast<int64_t>(in.size()));
      size_t bad = 0;
      while (bad < in.size() && sameBits(out[bad], scalar[bad]))
        ++bad;
      EXPECT_EQ(bad, in.size()) << "W=" << w << " " << describe(t)
                                << " differs at x=" << std::hexfloat << in[bad] << ": " << out[bad]
                                << " vs scalar " << scalar[bad];
    }
  }
}

// Runs `emit` (scalar and widest packet) on `x` and checks exact bits.
void expectExact(Emitter emit, std::initializer_list<std::pair<float, float>> cases) {
  std::vector<float> in;
  for (auto &[x, y] : cases)
    in.push_back(x);
  while (in.size() % 16)
    in.push_back(0.0f);
  for (const MathTarget &t : targets())
    for (int w : widths()) {
      std::vector<float> out(in.size());
      Kernel f = jit().compile(emit, w, t);
      ASSERT_NE(f, nullptr);
      f(in.data(), out.data(), static_cast<int64_t>(in.size()));
      size_t i = 0;
      for (auto &[x, y] : cases) {
        EXPECT_TRUE(sameBits(out[i], y))
            << "W=" << w << " " << describe(t) << " f(" << std::hexfloat << x << ") = " << out[i]
            << ", want " << y;
        ++i;
      }
    }
}

double sigmoidRef(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
double rsqrtRef(double x) {
  return 1.0 / std::sqrt(x);
}
double expRef(double x) {
  return std::exp(x);
}
double logRef(double x) {
  return std::log(x);
}
double tanhRef(double x) {
  return std::tanh(x);
}
double erfRef(double x) {
  return std::erf(x);
}
double sqrtRef(double x) {
  return std::sqrt(x);
}

const float kInf = std::numeric_limits<float>::infinity();
const double kErfBound = 2.5; // docs/math.md: measured over all 2^32 inputs

TEST(MathExp, WithinOneUlpAndSameBitsAtEveryWidth) {
  checkAccuracy(emitExp, expRef, 1.0);
}

TEST(MathExp, SpecialValuesExact) {
  // Before: IEEE specials and the overflow/underflow edges.
  // Expected: what correctly rounded expf gives.
  expectExact(emitExp, {{NAN, NAN},
                        {kInf, kInf},
                        {-kInf, 0.0f},
                        {0.0f, 1.0f},
                        {-0.0f, 1.0f},
                        {88.72283172607421875f, 0x1.ffff08p+127f},
                        {88.72283935546875f, kInf},
                        {FLT_MAX, kInf},
                        {-103.972084f, 0.0f},
                        {-103.9720764f, 0x1p-149f},
                        {-FLT_MAX, 0.0f}});
}

TEST(MathLog, WithinOneUlpAndSameBitsAtEveryWidth) {
  checkAccuracy(emitLog, logRef, 1.0);
}

TEST(MathLog, SpecialValuesExact) {
  expectExact(emitLog, {{1.0f, 0.0f},
                        {0.0f, -kInf},
                        {-0.0f, -kInf},
                        {-1.0f, NAN},
                        {-0x1p-149f, NAN},
                        {-kInf, NAN},
                        {kInf, kInf},
                        {NAN, NAN},
                        {0x1p-149f, -0x1.9d1da0p+6f},
                        {2.0f, 0x1.62e430p-1f}});
}

TEST(MathTanh, WithinTwoUlpAndSameBitsAtEveryWidth) {
  checkAccuracy(emitTanh, tanhRef, 2.0);
}

TEST(MathTanh, SpecialValuesExact) {
  expectExact(emitTanh, {{0.0f, 0.0f},
                         {-0.0f, -0.0f},
                         {kInf, 1.0f},
                         {-kInf, -1.0f},
                         {NAN, NAN},
                         {20.0f, 1.0f},
                         {-20.0f, -1.0f},
                         {9.0109138f, 1.0f},
                         {0x1.205966p+3f, 0x1.fffffep-1f},
                         {0x1p-149f, 0x1p-149f},
                         {-1e-20f, -1e-20f}});
}

TEST(MathSigmoid, WithinTwoUlpAndSameBitsAtEveryWidth) {
  checkAccuracy(emitSigmoid, sigmoidRef, 2.0);
}

TEST(MathSigmoid, SpecialValuesExact) {
  expectExact(emitSigmoid, {{kInf, 1.0f},
                            {-kInf, 0.0f},
                            {NAN, NAN},
                            {0.0f, 0.5f},
                            {-0.0f, 0.5f},
                            {20.0f, 1.0f},
                            {-104.0f, 0.0f},
                            {-103.972084f, 0.0f},
                            {-103.9720764f, 0x1p-149f},
                            {-103.0f, 0x1p-149f}});
}

TEST(MathErf, WithinBoundAndSameBitsAtEveryWidth) {
  checkAccuracy(emitErf, erfRef, kErfBound);
}

TEST(MathErf, SpecialValuesExact) {
  expectExact(emitErf, {{0.0f, 0.0f},
                        {-0.0f, -0.0f},
                        {kInf, 1.0f},
                        {-kInf, -1.0f},
                        {NAN, NAN},
                        {4.0f, 1.0f},
                        {-10.0f, -1.0f},
                        {FLT_MAX, 1.0f},
                        {0x1p-149f, 0x1p-149f},
                        {-0x1p-149f, -0x1p-149f}});
}

// Every f32 bit pattern, in chunks, at the widest W (whose bits equal the
// scalar form's, checked above), for each FMA setting: the max ULP error
// against `ref`. Takes minutes per function, so these run only when
// LANEJIT_MATH_EXHAUSTIVE is set; docs/math.md records their results.
constexpr uint64_t kChunk = uint64_t{1} << 24;

bool exhaustiveAsked() {
  return std::getenv("LANEJIT_MATH_EXHAUSTIVE") != nullptr;
}

void checkExhaustive(const char *name, Emitter emit, double (*ref)(double), double bound) {
  const int w = widths().back();
  std::vector<float> in(kChunk), out(kChunk);
  for (const MathTarget &t : targets()) {
    if (t.has_avx512f)
      continue; // same bits as without (ScalefSameBitsExhaustiveWhenAsked)
    Kernel f = jit().compile(emit, w, t);
    ASSERT_NE(f, nullptr);
    double worst = 0;
    float worstAt = 0;
    for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kChunk) {
      for (uint64_t i = 0; i < kChunk; ++i)
        in[i] = bitsToFloat(static_cast<uint32_t>(base + i));
      f(in.data(), out.data(), static_cast<int64_t>(kChunk));
      for (uint64_t i = 0; i < kChunk; ++i) {
        double e = ulpError(out[i], ref(static_cast<double>(in[i])));
        if (!(e <= worst))
          worst = e, worstAt = in[i];
      }
    }
    std::printf("%s exhaustive: fma=%d max %.3f ULP at %.9g (%a)\n", name, t.has_fma, worst,
                worstAt, worstAt);
    EXPECT_LE(worst, bound) << name << " fma=" << t.has_fma << " at x=" << std::hexfloat << worstAt;
  }
}

#define LANEJIT_EXHAUSTIVE_TEST(Suite, name, emit, ref, bound)                                     \
  TEST(Suite, ExhaustiveWhenAsked) {                                                               \
    if (!exhaustiveAsked())                                                                        \
      GTEST_SKIP() << "set LANEJIT_MATH_EXHAUSTIVE=1 for the 2^32 sweep";                          \
    checkExhaustive(name, emit, ref, bound);                                                       \
  }
LANEJIT_EXHAUSTIVE_TEST(MathExp, "exp", emitExp, expRef, 1.0)
LANEJIT_EXHAUSTIVE_TEST(MathLog, "log", emitLog, logRef, 1.0)
LANEJIT_EXHAUSTIVE_TEST(MathTanh, "tanh", emitTanh, tanhRef, 2.0)
LANEJIT_EXHAUSTIVE_TEST(MathSigmoid, "sigmoid", emitSigmoid, sigmoidRef, 2.0)
LANEJIT_EXHAUSTIVE_TEST(MathErf, "erf", emitErf, erfRef, kErfBound)
#undef LANEJIT_EXHAUSTIVE_TEST

// vscalefps instead of the integer 2^n factors is a choice of instructions:
// every f32 input gives the same bits with and without it, at every width
// that has it (a few seconds per width, so also only when asked).
TEST(MathExp, ScalefSameBitsExhaustiveWhenAsked) {
  if (!exhaustiveAsked())
    GTEST_SKIP() << "set LANEJIT_MATH_EXHAUSTIVE=1 for the 2^32 sweep";
  if (!hostHas("avx512f"))
    GTEST_SKIP() << "no AVX-512F";
  std::vector<float> in(kChunk), want(kChunk), got(kChunk);
  for (const MathTarget &t : targets()) {
    if (!t.has_avx512f)
      continue;
    for (int w : widths()) {
      if (w == 1 || (w < 16 && !t.has_avx512vl))
        continue;
      Kernel plain = jit().compile(emitExp, w, MathTarget{t.has_fma});
      Kernel scaled = jit().compile(emitExp, w, t);
      ASSERT_NE(plain, nullptr);
      ASSERT_NE(scaled, nullptr);
      uint64_t differ = 0;
      for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kChunk) {
        for (uint64_t i = 0; i < kChunk; ++i)
          in[i] = bitsToFloat(static_cast<uint32_t>(base + i));
        plain(in.data(), want.data(), static_cast<int64_t>(kChunk));
        scaled(in.data(), got.data(), static_cast<int64_t>(kChunk));
        for (uint64_t i = 0; i < kChunk; ++i)
          differ += !sameBits(got[i], want[i]);
      }
      std::printf("exp scalef vs generic, W=%d fma=%d: %llu of 2^32 inputs differ\n", w, t.has_fma,
                  static_cast<unsigned long long>(differ));
      EXPECT_EQ(differ, 0u) << "W=" << w << " " << describe(t);
    }
  }
}

TEST(MathSqrt, CorrectlyRounded) {
  checkAccuracy(emitSqrt, sqrtRef, 0.5);
  checkAccuracy(emitRsqrt, rsqrtRef, 1.5);
  expectExact(emitRsqrt, {{0.0f, kInf}, {-0.0f, -kInf}, {kInf, 0.0f}, {-1.0f, NAN}, {4.0f, 0.5f}});
}

// What in the code for `emit` is not plain inline arithmetic: calls other
// than intrinsics that lower to instructions, fast-math flags, and any call
// or PLT reference in the generated machine code. Empty when clean.
std::string impurities(llvm::TargetMachine &tm, Emitter emit, int lanes, const MathTarget &t) {
  llvm::LLVMContext ctx;
  auto m = buildModule(ctx, emit, lanes, t);
  std::string found;
  for (llvm::Instruction &inst : llvm::instructions(*m->getFunction("f"))) {
    if (llvm::isa<llvm::FPMathOperator>(inst) && inst.getFastMathFlags().any())
      found += "fast-math flags on " + std::string(inst.getOpcodeName()) + "; ";
    auto *call = llvm::dyn_cast<llvm::CallInst>(&inst);
    if (!call)
      continue;
    auto *intr = llvm::dyn_cast<llvm::IntrinsicInst>(call);
    llvm::Intrinsic::ID id = intr ? intr->getIntrinsicID() : llvm::Intrinsic::not_intrinsic;
    bool scalef = id == llvm::Intrinsic::x86_avx512_mask_scalef_ps_512 ||
                  id == llvm::Intrinsic::x86_avx512_mask_scalef_ps_256 ||
                  id == llvm::Intrinsic::x86_avx512_mask_scalef_ps_128;
    bool inlineIntrinsic = id == llvm::Intrinsic::fabs || id == llvm::Intrinsic::copysign ||
                           id == llvm::Intrinsic::sqrt ||
                           (id == llvm::Intrinsic::fma && t.has_fma) || (scalef && t.has_avx512f);
    if (!inlineIntrinsic)
      found += "IR calls " + call->getCalledFunction()->getName().str() + "; ";
  }
  m->setDataLayout(tm.createDataLayout());
  llvm::SmallString<0> asmText;
  llvm::raw_svector_ostream os(asmText);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile))
    return "cannot emit assembly";
  pm.run(*m);
  if (asmText.str().contains("call") || asmText.str().contains("@PLT"))
    found += "machine code calls out:\n" + asmText.str().str();
  return found;
}

// A deliberately bad emitter: llvm.exp becomes a call to expf on x86.
llvm::Value *libmExp(llvm::IRBuilder<> &b, llvm::Value *x, const MathTarget &) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
}

TEST(MathCode, NoCallsNoFastMathInIrOrMachineCode) {
  const std::pair<const char *, Emitter> emitters[] = {
      {"exp", emitExp}, {"log", emitLog},   {"tanh", emitTanh},  {"sigmoid", emitSigmoid},
      {"erf", emitErf}, {"sqrt", emitSqrt}, {"rsqrt", emitRsqrt}};
  auto tm = hostMachine().createTargetMachine();
  ASSERT_TRUE(static_cast<bool>(tm)) << llvm::toString(tm.takeError());
  for (const MathTarget &t : targets())
    for (int w : widths())
      for (auto &[name, emit] : emitters)
        EXPECT_EQ(impurities(**tm, emit, w, t), "") << name << " W=" << w << " " << describe(t);
  // The check itself can fail: a libm call is caught in the IR and the asm.
  std::string bad = impurities(**tm, libmExp, 4, MathTarget{});
  EXPECT_NE(bad.find("IR calls llvm.exp"), std::string::npos) << bad;
  EXPECT_NE(bad.find("machine code calls out"), std::string::npos) << bad;
}

} // namespace
} // namespace lanejit::codegen
