// The C++ capture DSL: every operator is a thin call to a validating ir::
// make function, so a program captured here is typed exactly like a parsed
// one. Only declarations and literals need logic of their own.
#include <lanejit/dsl.h>
#include <lanejit/error.h>
#include <lanejit/verify.h>

#include <cmath>
#include <cstdio>

namespace lanejit {

ProgramBuilder::ProgramBuilder(std::string name) {
  program_.name = std::move(name);
}

int ProgramBuilder::declare(Param param) {
  if (program_.inputIndex(param.name) >= 0)
    throw Error(Error::Kind::Verify,
                "program '" + program_.name + "': input '" + param.name + "' is declared twice");
  program_.inputs.push_back(std::move(param));
  return static_cast<int>(program_.inputs.size()) - 1;
}

Expr ProgramBuilder::rows(const std::string &name, Dim cols, DType type) {
  int index = declare({name, ParamKind::RowTensor, type, cols});
  return ir::load(index, program_.inputs[index], 0, cols);
}

Expr ProgramBuilder::columns(const std::string &name, Dim cols, DType type) {
  int index = declare({name, ParamKind::ColVector, type, cols});
  return ir::load(index, program_.inputs[index], 0, cols);
}

Expr ProgramBuilder::scalar(const std::string &name, DType type) {
  int index = declare({name, ParamKind::Scalar, type, Dim(0)});
  return ir::loadScalar(index, program_.inputs[index]);
}

void ProgramBuilder::write(const std::string &output, Dim begin, const Expr &value, Dim cols,
                           DType type) {
  if (!value)
    throw Error(Error::Kind::Verify, "write to output '" + output + "': missing value");
  int index = program_.outputIndex(output);
  if (index < 0) {
    // A value of another type than the buffer's (an i32 into f32) is
    // reported by the verifier as a mismatch against this declaration.
    program_.outputs.push_back({output, type, cols});
    index = static_cast<int>(program_.outputs.size()) - 1;
  }
  // A row-uniform value has no length of its own: it fills the rest of the
  // output's columns.
  Dim len = value->len ? *value->len : program_.outputs[index].cols - begin;
  program_.writes.push_back({index, begin, len, value});
}

void ProgramBuilder::output(const std::string &name, const Expr &value, DType type) {
  if (!value)
    throw Error(Error::Kind::Verify, "output '" + name + "': missing value");
  write(name, 0, value, value->len ? *value->len : Dim::C(), type);
}

Program ProgramBuilder::build() const {
  verifyOrThrow(program_);
  return program_;
}

Expr constant(float value) {
  return ir::constant(DType::F32, value);
}
Expr constantI32(int32_t value) {
  return ir::constant(DType::I32, value);
}
Expr row() {
  return ir::rowIndex();
}
Expr dim(Dim d) {
  return ir::dimValue(d);
}
Expr col(Dim len, Dim begin) {
  return ir::colIndex(begin, len);
}

Expr operator+(Expr a, Expr b) {
  return ir::binary(BinaryOp::Add, std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return ir::binary(BinaryOp::Sub, std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return ir::binary(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return ir::binary(BinaryOp::Div, std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return ir::binary(BinaryOp::Mod, std::move(a), std::move(b));
}
Expr operator-(Expr a) {
  return ir::unary(UnaryOp::Neg, std::move(a));
}
Expr operator<(Expr a, Expr b) {
  return ir::binary(BinaryOp::Lt, std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
  return ir::binary(BinaryOp::Le, std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
  return ir::binary(BinaryOp::Gt, std::move(a), std::move(b));
}
Expr operator>=(Expr a, Expr b) {
  return ir::binary(BinaryOp::Ge, std::move(a), std::move(b));
}
Expr operator&&(Expr a, Expr b) {
  return ir::binary(BinaryOp::And, std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
  return ir::binary(BinaryOp::Or, std::move(a), std::move(b));
}
Expr logicalNot(Expr a) {
  return ir::unary(UnaryOp::Not, std::move(a));
}
Expr eq(Expr a, Expr b) {
  return ir::binary(BinaryOp::Eq, std::move(a), std::move(b));
}
Expr ne(Expr a, Expr b) {
  return ir::binary(BinaryOp::Ne, std::move(a), std::move(b));
}

Expr literalLike(const Expr &like, double value) {
  if (!like)
    throw Error(Error::Kind::Verify, "literal: the other operand is missing");
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  switch (like->type) {
  case DType::F32:
    // Rounding silently would make the program differ from what was typed;
    // a float literal (0.1f) states the rounding explicitly.
    if (!std::isnan(value) && static_cast<double>(static_cast<float>(value)) != value)
      throw Error(Error::Kind::Verify, std::string("literal ") + text +
                                           " is not exactly an f32; write it as a "
                                           "float literal (with an f suffix)");
    return ir::constant(DType::F32, value);
  case DType::I32:
    if (value != std::trunc(value) || value < INT32_MIN || value > INT32_MAX)
      throw Error(Error::Kind::Verify,
                  std::string("literal ") + text + " next to an i32 operand is not an i32");
    return ir::constant(DType::I32, value);
  case DType::Bool: break;
  }
  throw Error(Error::Kind::Verify,
              std::string("literal ") + text + ": the other operand is bool, not a number");
}

Expr abs(Expr x) {
  return ir::unary(UnaryOp::Abs, std::move(x));
}
Expr exp(Expr x) {
  return ir::unary(UnaryOp::Exp, std::move(x));
}
Expr log(Expr x) {
  return ir::unary(UnaryOp::Log, std::move(x));
}
Expr sqrt(Expr x) {
  return ir::unary(UnaryOp::Sqrt, std::move(x));
}
Expr rsqrt(Expr x) {
  return ir::unary(UnaryOp::Rsqrt, std::move(x));
}
Expr tanh(Expr x) {
  return ir::unary(UnaryOp::Tanh, std::move(x));
}
Expr sigmoid(Expr x) {
  return ir::unary(UnaryOp::Sigmoid, std::move(x));
}
Expr erf(Expr x) {
  return ir::unary(UnaryOp::Erf, std::move(x));
}
Expr min(Expr a, Expr b) {
  return ir::binary(BinaryOp::Min, std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
  return ir::binary(BinaryOp::Max, std::move(a), std::move(b));
}
Expr select(Expr cond, Expr a, Expr b) {
  return ir::select(std::move(cond), std::move(a), std::move(b));
}
Expr fma(Expr a, Expr b, Expr c) {
  return ir::fma(std::move(a), std::move(b), std::move(c));
}
Expr toF32(Expr x) {
  return ir::unary(UnaryOp::ToF32, std::move(x));
}
Expr toI32(Expr x) {
  return ir::unary(UnaryOp::ToI32, std::move(x));
}

Expr sum(Expr x) {
  return ir::reduce(ReduceOp::Sum, std::move(x));
}
Expr mean(Expr x) {
  return ir::reduce(ReduceOp::Mean, std::move(x));
}
Expr rowmax(Expr x) {
  return ir::reduce(ReduceOp::Max, std::move(x));
}
Expr rowmin(Expr x) {
  return ir::reduce(ReduceOp::Min, std::move(x));
}

Expr groupsum(Expr x, int64_t g) { return ir::group(ReduceOp::Sum, std::move(x), g); }
Expr groupmean(Expr x, int64_t g) { return ir::group(ReduceOp::Mean, std::move(x), g); }
Expr groupmax(Expr x, int64_t g) { return ir::group(ReduceOp::Max, std::move(x), g); }
Expr groupmin(Expr x, int64_t g) { return ir::group(ReduceOp::Min, std::move(x), g); }
Expr repeat(Expr v, int64_t g) { return ir::repeat(std::move(v), g); }

} // namespace lanejit
