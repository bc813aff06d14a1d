// lanejit/library.h — the six library operators as ready row programs.
//
// docs/library.md defines each one and shows its text form.
#pragma once

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

struct Entry {
  std::string name; // "rope", "layernorm", "swiglu", "rmsnorm", "gelu_residual", "masked_softmax"
  Program (*make)();
};
const std::vector<Entry> &all();
// Throws Error(Kind::Verify) for an unknown name.
Program byName(const std::string &name);

} // namespace lanejit::library
