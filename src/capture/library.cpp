// The six library operators, written in the capture DSL as docs/library.md
// defines them. Constants are float literals:
// the program states the f32 value it computes with. Where the hand-written
// AVX-512 kernels fuse a multiply and an add, the program asks for the same
// fma: that is part of the operator's definition (docs/library.md), never a
// contraction the compiler chooses.
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/library.h>

#include <limits>

namespace lanejit::library {

Program rope() {
  ProgramBuilder b("rope");
  Dim c = Dim::C(), h = Dim::C() / 2;
  Expr x = b.rows("x"), cos = b.rows("cos", h), sin = b.rows("sin", h);
  Expr lo = x.cols(0, h), hi = x.cols(h, c);
  b.write("y", 0, fma(lo, cos, -(hi * sin)));
  b.write("y", h, fma(lo, sin, hi * cos));
  return b.build();
}

Program layerNorm() {
  ProgramBuilder b("layernorm");
  Expr x = b.rows("x"), gamma = b.columns("gamma"), beta = b.columns("beta");
  Expr mu = mean(x);
  Expr d = x - mu;
  Expr var = mean(d * d);
  // One division per row instead of one per element; the per-element work
  // is then fma(d * inv, gamma, beta).
  Expr inv = 1.0f / sqrt(var + 1e-5f);
  b.output("y", fma(d * inv, gamma, beta));
  return b.build();
}

Program swiglu() {
  ProgramBuilder b("swiglu");
  Expr x = b.rows("x"), u = b.rows("u");
  // The operator's formula (docs/library.md), not sigmoid(x): the kernel computes what it says.
  b.output("y", x / (1.0f + exp(-x)) * u);
  return b.build();
}

namespace {
Expr rmsNormOf(ProgramBuilder &b) {
  Expr x = b.rows("x"), gamma = b.columns("gamma");
  Expr inv = 1.0f / sqrt(mean(x * x) + 1e-5f); // row-uniform, as in layerNorm
  return x * inv * gamma;
}
} // namespace

Program rmsNorm() {
  ProgramBuilder b("rmsnorm");
  b.output("y", rmsNormOf(b));
  return b.build();
}

Program geluResidual() {
  ProgramBuilder b("gelu_residual");
  Expr x = b.rows("x"), u = b.rows("u");
  // 0.5x(1 + t) as fma(0.5x, t, 0.5x): the same value, one rounding fewer.
  Expr inner = 0.7978845608f * fma(literalLike(x, 0.044715f), x * x * x, x);
  Expr half = 0.5f * x;
  b.output("y", fma(half, tanh(inner), half) + u);
  return b.build();
}

Program maskedSoftmax() {
  ProgramBuilder b("masked_softmax");
  Expr x = b.rows("x");
  Expr valid = col(Dim::C()) <= row() % dim(Dim::C());
  // Invalid columns take no part in the max or the sum (-inf and -0.0 are
  // those reductions' identities) and their output is an exact 0. Written
  // this way, lanejit stops each row's traversals at its last valid column.
  Expr scores = select(valid, x, constant(-std::numeric_limits<float>::infinity()));
  Expr m = rowmax(scores);
  Expr e = exp(x - m);
  Expr s = sum(select(valid, e, constant(-0.0f)));
  b.output("y", select(valid, e / s, constant(0.0f)));
  return b.build();
}

namespace {
// 127 / max|y| in one rounding, as ggml's x86 quantizers compute it (not
// 1 / scale, two roundings), 0 for a zero max. An infinite max gives 0
// (every finite value stores 0, and the scale says inf); a NaN gives NaN,
// stored as 0.
Expr inverseScale(const Expr &absmax) {
  return select(eq(absmax, constant(0.0f)), constant(0.0f), 127.0f / absmax);
}
} // namespace

void quantizeRows(ProgramBuilder &b, const Expr &y, const std::string &values,
                  const std::string &scales) {
  Expr absmax = rowmax(abs(y));
  b.output(values, y * inverseScale(absmax), DType::I8);
  b.write(scales, 0, absmax / 127.0f, 1);
}

void quantizeBlocks(ProgramBuilder &b, const Expr &y, const std::string &values,
                    const std::string &scales, int64_t block) {
  Expr absmax = groupmax(abs(y), block);
  b.output(values, y * repeat(inverseScale(absmax), block), DType::I8);
  b.output(scales, absmax / 127.0f, DType::F16);
}

Program quantizeQ8() {
  ProgramBuilder b("quantize_q8");
  quantizeRows(b, b.rows("x"));
  return b.build();
}

Program rmsNormQ8() {
  ProgramBuilder b("rmsnorm_q8");
  quantizeRows(b, rmsNormOf(b));
  return b.build();
}

Program quantizeQ8_0() {
  ProgramBuilder b("quantize_q8_0");
  quantizeBlocks(b, b.rows("x"));
  return b.build();
}

Program rmsNormQ8_0() {
  ProgramBuilder b("rmsnorm_q8_0");
  quantizeBlocks(b, rmsNormOf(b));
  return b.build();
}

const std::vector<Entry> &all() {
  static const std::vector<Entry> entries = {
      {"rope", rope},       {"layernorm", layerNorm},        {"swiglu", swiglu},
      {"rmsnorm", rmsNorm}, {"gelu_residual", geluResidual}, {"masked_softmax", maskedSoftmax},
  };
  return entries;
}

const std::vector<Entry> &quantizing() {
  static const std::vector<Entry> entries = {{"quantize_q8", quantizeQ8},
                                             {"rmsnorm_q8", rmsNormQ8},
                                             {"quantize_q8_0", quantizeQ8_0},
                                             {"rmsnorm_q8_0", rmsNormQ8_0}};
  return entries;
}

Program byName(const std::string &name) {
  std::string known;
  for (const auto *entries : {&all(), &quantizing()})
    for (const Entry &e : *entries) {
      if (e.name == name)
        return e.make();
      known += (known.empty() ? "" : ", ") + e.name;
    }
  throw Error(Error::Kind::Verify, "unknown operator '" + name + "'; known: " + known);
}

} // namespace lanejit::library
