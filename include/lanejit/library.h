// lanejit/library.h — the six library operators as ready row programs, and
// int8 row quantization.
//
// docs/library.md defines each one and shows its text form.
#pragma once

#include <lanejit/ir.h>

#include <string>
#include <vector>

namespace lanejit {
class ProgramBuilder; // lanejit/dsl.h
}

namespace lanejit::library {

// x:[R,C], cos,sin:[R,C/2] -> y:[R,C]; C even.
//   y[:, :h] = x[:, :h]*cos - x[:, h:]*sin;  y[:, h:] = x[:, :h]*sin + x[:, h:]*cos
Program rope();
// x:[R,C], gamma,beta:[C] -> y:[R,C]; centered two-pass, eps = 1e-5.
Program layerNorm();
// x,u:[R,C] -> y = x/(1+exp(-x))*u.
Program swiglu();
// x:[R,C], gamma:[C] -> y = x/sqrt(mean(x^2)+1e-5)*gamma.
Program rmsNorm();
// x,u:[R,C] -> y = 0.5*x*(1+tanh(0.7978845608*(x+0.044715*x^3))) + u.
Program geluResidual();
// x:[R,C] -> softmax over the columns c <= r mod C; others are exactly 0.
Program maskedSoftmax();

// Symmetric int8 quantization of each row (dynamic, per token), appended to
// any row program so that it runs in the same pass over the row: declares
// output `values` (i8, y's columns) and `scales` (f32 [R, 1]) and writes
//   scale = max|y| / 127,  values = y * (127 / max|y|)  (0 where max|y| = 0)
// the values stored as i8: nearest-even, saturated to +-127, NaN as 0.
void quantizeRows(ProgramBuilder &b, const Expr &y, const std::string &values = "q",
                  const std::string &scales = "scale");
// The same per block of `block` columns (ggml's Q8_0 for 32): outputs
// `values` (i8, y's columns) and `scales` (f16 [R, C/block]):
//   d = max|y[block]| / 127 stored as f16,  values = y * (127 / max|y[block]|)
// where q is computed from the f32 max, not the rounded d, as ggml does.
// C must be a multiple of `block`.
void quantizeBlocks(ProgramBuilder &b, const Expr &y, const std::string &values = "q",
                    const std::string &scales = "scale", int64_t block = 32);
// x:[R,C] -> q:i8[R,C], scale:[R,1]
Program quantizeQ8();
// x:[R,C], gamma:[C] -> rmsNorm's y, quantized: q:i8[R,C], scale:[R,1].
Program rmsNormQ8();
// x:[R,C] -> q:i8[R,C], scale:f16[R,C/32] (Q8_0's values and scales)
Program quantizeQ8_0();
// x:[R,C], gamma:[C] -> rmsNorm's y in Q8_0: q:i8[R,C], scale:f16[R,C/32].
Program rmsNormQ8_0();

struct Entry {
  std::string name; // "rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual", "masked_softmax"
  Program (*make)();
};
// The six operators.
const std::vector<Entry> &all();
// The quantizing entries: "quantize_q8", "rmsnorm_q8", "quantize_q8_0",
// "rmsnorm_q8_0".
const std::vector<Entry> &quantizing();
// Any entry of all() or quantizing(); throws Error(Kind::Verify) for an
// unknown name.
Program byName(const std::string &name);

} // namespace lanejit::library
