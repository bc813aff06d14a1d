// lanejit/library.h — the six library operators as ready row programs, and
// int8 row quantization.
//
// docs/library.md defines each one and shows its text form.
#pragma once

#include <lanejit/dsl.h>
#include <lanejit/ir.h>

#include <string>
#include <vector>

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
// x:[R,C] -> q:i8[R,C], scale:[R,1]
Program quantizeQ8();
// x:[R,C], gamma:[C] -> rmsNorm's y, quantized: q:i8[R,C], scale:[R,1].
Program rmsNormQ8();

struct Entry {
  std::string name; // "rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual", "masked_softmax"
  Program (*make)();
};
// The six operators.
const std::vector<Entry> &all();
// The quantizing entries: "quantize_q8", "rmsnorm_q8".
const std::vector<Entry> &quantizing();
// Any entry of all() or quantizing(); throws Error(Kind::Verify) for an
// unknown name.
Program byName(const std::string &name);

} // namespace lanejit::library
