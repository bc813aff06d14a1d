// tests/support/random_row_program.h — seeded random row programs, for
// checks that compare bits between two builds of one program (tests/cross:
// x86 against aarch64) rather than values against the oracle.
//
//   RandomRowProgram p = randomRowProgram(42);
//   // p.program: in x[R,C] (u[R,C], g[C], s), out y[R,C] (h[R,C/2], z[R,2])
//
// Programs mix elementwise math (exp, log, tanh, sigmoid, erf, sqrt,
// rsqrt, abs, neg, add, sub, mul, div, min, max, fma, compare and select),
// row reductions (sum, max, min, mean) broadcast back over the columns,
// column-vector and scalar inputs, and half-row loads and slices. Values
// may overflow or turn NaN: bits are compared, not closeness. The same seed
// gives the same program on every machine (own integer draws, no
// std::uniform_*_distribution).
#pragma once

#include <lanejit/ir.h>

#include <cstdint>
#include <string>

namespace lanejit::test {

struct RandomRowProgram {
  Program program;
  std::string text;     // what parse() read, for failure messages
  bool even_cols = false; // uses C/2: bind only even C
};

// Throws Error (a parse or verify message and the text) if the generator
// wrote a program the front end refuses: a bug here, not in lanejit.
RandomRowProgram randomRowProgram(uint64_t seed);

} // namespace lanejit::test
