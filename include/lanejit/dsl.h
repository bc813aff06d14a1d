// lanejit/dsl.h — capturing a row program in C++.
//
//   ProgramBuilder b("layernorm");
//   Expr x = b.rows("x"), g = b.columns("gamma"), be = b.columns("beta");
//   Expr mu = mean(x);
//   Expr d = x - mu;
//   b.output("y", d * rsqrt(mean(d * d) + 1e-5f) * g + be);
//   Program p = b.build();
//
// Operators build IR nodes (ir.h); numeric literals take the type of the
// other operand. Comparisons are lt/le/gt/ge/eq/ne (==, != compare handles
// in C++, so they are not overloaded); <, <=, >, >= are provided as well.
#pragma once

#include <lanejit/ir.h>

#include <string>

namespace lanejit {

class ProgramBuilder {
public:
  explicit ProgramBuilder(std::string name);

  // Declares an input and returns the load of all its columns. `type` is
  // how the buffer holds its elements (f32, bf16 or f16); the load is f32.
  Expr rows(const std::string &name, Dim cols = Dim::C(), DType type = DType::F32); // [R, cols]
  Expr rows(const std::string &name, DType type) { return rows(name, Dim::C(), type); }
  Expr columns(const std::string &name, Dim cols = Dim::C(), DType type = DType::F32); // [cols]
  Expr columns(const std::string &name, DType type) { return columns(name, Dim::C(), type); }
  Expr scalar(const std::string &name, DType type = DType::F32); // one element

  // Declares an output [R, cols] of `type` (if not yet declared) and writes
  // value into columns [begin, begin + length of value).
  void write(const std::string &output, Dim begin, const Expr &value, Dim cols = Dim::C(),
             DType type = DType::F32);
  // Declares output [R, len(value)] and writes all of it.
  void output(const std::string &name, const Expr &value, DType type = DType::F32);

  // Verifies and returns the program (throws Error(Kind::Verify)).
  Program build() const;

private:
  int declare(Param param);
  Program program_;
};

// Row-uniform values.
Expr constant(float value);
Expr constantI32(int32_t value);
Expr row();                                  // the row index, i32
Expr dim(Dim d);                             // e.g. dim(Dim::C()), i32
Expr col(Dim len = Dim::C(), Dim begin = 0); // column index vector, i32

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
// Logical not. (operator! is not overloaded: `!expr` must keep testing
// whether a handle is null.)
Expr logicalNot(Expr a);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);

// A literal next to an Expr takes the Expr's type.
Expr literalLike(const Expr &like, double value);
#define LANEJIT_LITERAL_OPERATOR(OP)                                                               \
  inline Expr operator OP(Expr a, double b) {                                                      \
    Expr lit = literalLike(a, b);                                                                  \
    return std::move(a) OP lit;                                                                    \
  }                                                                                                \
  inline Expr operator OP(double a, Expr b) {                                                      \
    Expr lit = literalLike(b, a);                                                                  \
    return lit OP std::move(b);                                                                    \
  }
LANEJIT_LITERAL_OPERATOR(+)
LANEJIT_LITERAL_OPERATOR(-)
LANEJIT_LITERAL_OPERATOR(*)
LANEJIT_LITERAL_OPERATOR(/)
LANEJIT_LITERAL_OPERATOR(%)
LANEJIT_LITERAL_OPERATOR(<)
LANEJIT_LITERAL_OPERATOR(<=)
LANEJIT_LITERAL_OPERATOR(>)
LANEJIT_LITERAL_OPERATOR(>=)
#undef LANEJIT_LITERAL_OPERATOR

Expr abs(Expr x);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr tanh(Expr x);
Expr sigmoid(Expr x);
Expr erf(Expr x); // the error function (exact GELU)
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr cond, Expr a, Expr b);
Expr fma(Expr a, Expr b, Expr c);
Expr toF32(Expr x);
Expr toI32(Expr x);

// Row reductions; the result broadcasts over the row.
Expr sum(Expr x);
Expr mean(Expr x);
Expr rowmax(Expr x);
Expr rowmin(Expr x);

// Per group of `g` columns (x[:, j*g : j*g+g] -> element j; the length of x
// must divide by g), and back: repeat(v, g) gives each element g columns.
Expr groupsum(Expr x, int64_t g);
Expr groupmean(Expr x, int64_t g);
Expr groupmax(Expr x, int64_t g);
Expr groupmin(Expr x, int64_t g);
Expr repeat(Expr v, int64_t g);

} // namespace lanejit
