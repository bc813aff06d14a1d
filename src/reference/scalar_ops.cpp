// Per-element semantics of the FP64 oracle.
#include "scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

namespace lanejit::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// i32 arithmetic is two's complement: results wrap to 32 bits (C++20 makes
// the narrowing conversion modular).
double wrap(int64_t v) {
  return static_cast<int32_t>(static_cast<uint64_t>(v));
}

// Floored division and modulo; a zero divisor gives 0 (ir.h).
int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  return q;
}

int64_t floorMod(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0)))
    m += b;
  return m;
}

double toI32(double x) {
  double t = std::trunc(x);
  if (std::isnan(x) || t < INT32_MIN || t > INT32_MAX)
    return INT32_MIN; // as x86's cvttss2si does
  return t;
}

double integer(BinaryOp op, int64_t a, int64_t b) {
  switch (op) {
  case BinaryOp::Add: return wrap(a + b);
  case BinaryOp::Sub: return wrap(a - b);
  case BinaryOp::Mul: return wrap(a * b);
  case BinaryOp::Div: return wrap(floorDiv(a, b)); // INT32_MIN / -1 wraps
  case BinaryOp::Mod: return wrap(floorMod(a, b));
  case BinaryOp::Min: return static_cast<double>(std::min(a, b));
  case BinaryOp::Max: return static_cast<double>(std::max(a, b));
  default: return kNaN; // comparisons and logic are type-independent
  }
}

} // namespace

double minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  if (a == b)
    return std::signbit(a) ? a : b; // -0 < +0
  return a < b ? a : b;
}

double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return kNaN;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double unary(UnaryOp op, DType type, double x) {
  switch (op) {
  case UnaryOp::Neg: return type == DType::I32 ? wrap(-static_cast<int64_t>(x)) : -x;
  case UnaryOp::Abs:
    return type == DType::I32 ? wrap(std::abs(static_cast<int64_t>(x))) : std::fabs(x);
  case UnaryOp::Exp: return std::exp(x);
  case UnaryOp::Log: return std::log(x);
  case UnaryOp::Sqrt: return std::sqrt(x);
  case UnaryOp::Rsqrt: return 1.0 / std::sqrt(x);
  case UnaryOp::Tanh: return std::tanh(x);
  case UnaryOp::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
  case UnaryOp::Erf: return std::erf(x);
  case UnaryOp::Not: return x == 0 ? 1 : 0;
  case UnaryOp::ToF32: return x; // exact in FP64
  case UnaryOp::ToI32: return toI32(x);
  }
  return kNaN;
}

double binary(BinaryOp op, DType type, double a, double b) {
  switch (op) {
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  case BinaryOp::Eq: return a == b;
  case BinaryOp::Ne: return a != b; // true on NaN, like every IEEE ne
  case BinaryOp::And: return a != 0 && b != 0;
  case BinaryOp::Or: return a != 0 || b != 0;
  default: break;
  }
  if (type == DType::I32)
    return integer(op, static_cast<int64_t>(a), static_cast<int64_t>(b));
  switch (op) {
  case BinaryOp::Add: return a + b;
  case BinaryOp::Sub: return a - b;
  case BinaryOp::Mul: return a * b;
  case BinaryOp::Div: return a / b;
  case BinaryOp::Min: return minimum(a, b);
  case BinaryOp::Max: return maximum(a, b);
  default: return kNaN; // Mod is i32 only (ir::binary enforces it)
  }
}

double reduce(ReduceOp op, const std::vector<double> &values) {
  double acc = 0;
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean:
    for (double v : values)
      acc += v;
    return op == ReduceOp::Mean ? acc / static_cast<double>(values.size()) : acc;
  case ReduceOp::Max:
    acc = -std::numeric_limits<double>::infinity();
    for (double v : values)
      acc = maximum(acc, v);
    return acc;
  case ReduceOp::Min:
    acc = std::numeric_limits<double>::infinity();
    for (double v : values)
      acc = minimum(acc, v);
    return acc;
  }
  return kNaN;
}

} // namespace lanejit::reference
