// Validating constructors for IR nodes and the names of every enum.
#include <lanejit/error.h>
#include <lanejit/ir.h>

#include "hash.h"

#include <cmath>
#include <limits>

namespace lanejit {
namespace {

[[noreturn]] void fail(std::string_view op, const std::string &problem) {
  throw Error(Error::Kind::Verify, std::string(op) + ": " + problem);
}

std::string lenStr(const std::optional<Dim> &len) {
  return len ? "[" + len->str() + "]" : "row-uniform";
}

uint64_t computeHash(const Node &n) {
  using detail::hashMix;
  uint64_t h = hashMix(static_cast<uint64_t>(n.kind) + 1, n.op);
  h = hashMix(h, static_cast<uint64_t>(n.type));
  h = hashMix(h, n.len ? n.len->hash() : 0x51);
  h = hashMix(h, n.begin.hash());
  h = hashMix(h, static_cast<uint64_t>(n.param + 1));
  h = hashMix(h, detail::hashDouble(n.value));
  for (const Expr &a : n.args)
    h = hashMix(h, a->hash);
  return h;
}

Expr finish(Node node) {
  node.hash = computeHash(node);
  return Expr(std::make_shared<const Node>(std::move(node)));
}

bool isNumeric(DType t) { return t == DType::F32 || t == DType::I32; }

// The length of an elementwise result: operands must agree or broadcast.
std::optional<Dim> joinLengths(std::string_view op, const std::vector<Expr> &args) {
  std::optional<Dim> len;
  for (const Expr &a : args) {
    if (!a)
      fail(op, "missing operand");
    if (!a->len)
      continue;
    if (len && *len != *a->len)
      fail(op, "operand lengths " + lenStr(len) + " and " + lenStr(a->len) +
                   " differ (elementwise operands must have equal column counts)");
    len = a->len;
  }
  return len;
}

} // namespace

#define LANEJIT_NAME_CASE(Name, Text, ...)                                     \
  case Name:                                                                   \
    return Text;
std::string_view name(UnaryOp op) {
  using enum UnaryOp;
  switch (op) { LANEJIT_UNARY_OPS(LANEJIT_NAME_CASE) }
  return "?";
}
std::string_view name(BinaryOp op) {
  using enum BinaryOp;
  switch (op) { LANEJIT_BINARY_OPS(LANEJIT_NAME_CASE) }
  return "?";
}
std::string_view name(ReduceOp op) {
  using enum ReduceOp;
  switch (op) { LANEJIT_REDUCE_OPS(LANEJIT_NAME_CASE) }
  return "?";
}
#undef LANEJIT_NAME_CASE
#define LANEJIT_NAME_CASE(Name)                                                \
  case NodeKind::Name:                                                         \
    return #Name;
std::string_view name(NodeKind kind) {
  switch (kind) { LANEJIT_NODE_KINDS(LANEJIT_NAME_CASE) }
  return "?";
}
#undef LANEJIT_NAME_CASE

std::string_view name(DType type) {
  switch (type) {
  case DType::F32: return "f32";
  case DType::I32: return "i32";
  case DType::Bool: return "bool";
  case DType::BF16: return "bf16";
  case DType::F16: return "f16";
  case DType::I8: return "i8";
  }
  return "?";
}

bool isStorageOnly(DType type) {
  return type == DType::BF16 || type == DType::F16 || type == DType::I8;
}

DType valueTypeOf(DType storage) { return isStorageOnly(storage) ? DType::F32 : storage; }

int64_t bytesOf(DType type) {
  switch (type) {
  case DType::F32:
  case DType::I32: return 4;
  case DType::BF16:
  case DType::F16: return 2;
  case DType::Bool:
  case DType::I8: return 1;
  }
  return 4;
}

std::string_view name(ParamKind kind) {
  switch (kind) {
  case ParamKind::RowTensor: return "row tensor";
  case ParamKind::ColVector: return "column vector";
  case ParamKind::Scalar: return "scalar";
  }
  return "?";
}

Expr Expr::cols(Dim begin, Dim end) const { return ir::slice(*this, begin, end - begin); }

namespace ir {

Expr load(int param, const Param &decl, Dim begin, Dim len) {
  if (decl.kind == ParamKind::Scalar)
    fail("load", "input '" + decl.name + "' is a scalar and has no columns");
  Node n{NodeKind::Load};
  n.type = valueTypeOf(decl.type);
  n.param = param;
  n.begin = begin;
  n.len = len;
  return finish(std::move(n));
}

Expr loadScalar(int param, const Param &decl) {
  if (decl.kind != ParamKind::Scalar)
    fail("load", "input '" + decl.name + "' is a " + std::string(name(decl.kind)) +
                     "; give a column range");
  Node n{NodeKind::Load};
  n.type = valueTypeOf(decl.type);
  n.param = param;
  return finish(std::move(n));
}

Expr constant(DType type, double value) {
  switch (type) {
  case DType::F32:
    if (!std::isnan(value) && static_cast<double>(static_cast<float>(value)) != value)
      fail("const", "value " + std::to_string(value) + " is not exactly an f32");
    if (std::isnan(value))
      value = std::numeric_limits<double>::quiet_NaN();
    break;
  case DType::I32:
    if (value != std::trunc(value) || value < INT32_MIN || value > INT32_MAX)
      fail("const", "value " + std::to_string(value) + " is not an i32");
    break;
  case DType::Bool:
    if (value != 0 && value != 1)
      fail("const", "bool value must be 0 or 1");
    break;
  case DType::BF16:
  case DType::F16:
  case DType::I8:
    fail("const", std::string(name(type)) +
                      " is a storage type of inputs and outputs; constants are f32, i32 or bool");
  }
  Node n{NodeKind::Const};
  n.type = type;
  n.value = value;
  return finish(std::move(n));
}

Expr rowIndex() {
  Node n{NodeKind::RowIndex};
  n.type = DType::I32;
  return finish(std::move(n));
}

Expr colIndex(Dim begin, Dim len) {
  Node n{NodeKind::ColIndex};
  n.type = DType::I32;
  n.begin = begin;
  n.len = len;
  return finish(std::move(n));
}

Expr dimValue(Dim dim) {
  Node n{NodeKind::DimValue};
  n.type = DType::I32;
  n.begin = dim;
  return finish(std::move(n));
}

Expr slice(Expr arg, Dim begin, Dim len) {
  if (!arg)
    fail("slice", "missing operand");
  if (!arg->len)
    fail("slice", "operand is row-uniform and has no columns to slice");
  if (!provablyLessEqual(Dim(0), begin))
    fail("slice", "begin " + begin.str() + " may be negative");
  if (!provablyLessEqual(begin + len, *arg->len))
    fail("slice", "end " + (begin + len).str() + " may exceed the operand's length " +
                      arg->len->str());
  Node n{NodeKind::Slice};
  n.type = arg->type;
  n.begin = begin;
  n.len = len;
  n.args = {std::move(arg)};
  return finish(std::move(n));
}

Expr unary(UnaryOp op, Expr arg) {
  std::string_view opName = name(op);
  if (!arg)
    fail(opName, "missing operand");
  DType t = arg->type;
  DType result = t;
  switch (op) {
  case UnaryOp::Neg:
  case UnaryOp::Abs:
    if (!isNumeric(t))
      fail(opName, "operand must be f32 or i32, not " + std::string(name(t)));
    break;
  case UnaryOp::Exp:
  case UnaryOp::Log:
  case UnaryOp::Sqrt:
  case UnaryOp::Rsqrt:
  case UnaryOp::Tanh:
  case UnaryOp::Sigmoid:
  case UnaryOp::Erf:
  case UnaryOp::ToI32:
    if (t != DType::F32)
      fail(opName, "operand must be f32, not " + std::string(name(t)));
    if (op == UnaryOp::ToI32)
      result = DType::I32;
    break;
  case UnaryOp::Not:
    if (t != DType::Bool)
      fail(opName, "operand must be bool, not " + std::string(name(t)));
    break;
  case UnaryOp::ToF32:
    if (t != DType::I32)
      fail(opName, "operand must be i32, not " + std::string(name(t)));
    result = DType::F32;
    break;
  }
  Node n{NodeKind::Unary};
  n.op = static_cast<uint8_t>(op);
  n.type = result;
  n.len = arg->len;
  n.args = {std::move(arg)};
  return finish(std::move(n));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
  std::string_view opName = name(op);
  std::vector<Expr> args{std::move(a), std::move(b)};
  std::optional<Dim> len = joinLengths(opName, args);
  DType ta = args[0]->type, tb = args[1]->type;
  if (ta != tb)
    fail(opName, "operand types " + std::string(name(ta)) + " and " +
                     std::string(name(tb)) + " differ");
  DType result = ta;
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Min:
  case BinaryOp::Max:
    if (!isNumeric(ta))
      fail(opName, "operands must be f32 or i32, not " + std::string(name(ta)));
    break;
  case BinaryOp::Mod:
    if (ta != DType::I32)
      fail(opName, "operands must be i32, not " + std::string(name(ta)));
    break;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    if (!isNumeric(ta))
      fail(opName, "operands must be f32 or i32, not " + std::string(name(ta)));
    result = DType::Bool;
    break;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    result = DType::Bool;
    break;
  case BinaryOp::And:
  case BinaryOp::Or:
    if (ta != DType::Bool)
      fail(opName, "operands must be bool, not " + std::string(name(ta)));
    break;
  }
  Node n{NodeKind::Binary};
  n.op = static_cast<uint8_t>(op);
  n.type = result;
  n.len = len;
  n.args = std::move(args);
  return finish(std::move(n));
}

Expr select(Expr cond, Expr a, Expr b) {
  std::vector<Expr> args{std::move(cond), std::move(a), std::move(b)};
  std::optional<Dim> len = joinLengths("select", args);
  if (args[0]->type != DType::Bool)
    fail("select", "condition must be bool, not " + std::string(name(args[0]->type)));
  if (args[1]->type != args[2]->type)
    fail("select", "value types " + std::string(name(args[1]->type)) + " and " +
                       std::string(name(args[2]->type)) + " differ");
  Node n{NodeKind::Select};
  n.type = args[1]->type;
  n.len = len;
  n.args = std::move(args);
  return finish(std::move(n));
}

Expr fma(Expr a, Expr b, Expr c) {
  std::vector<Expr> args{std::move(a), std::move(b), std::move(c)};
  std::optional<Dim> len = joinLengths("fma", args);
  for (const Expr &e : args)
    if (e->type != DType::F32)
      fail("fma", "operands must be f32, not " + std::string(name(e->type)));
  Node n{NodeKind::Fma};
  n.type = DType::F32;
  n.len = len;
  n.args = std::move(args);
  return finish(std::move(n));
}

Expr reduce(ReduceOp op, Expr arg) {
  std::string opName = "reduce." + std::string(name(op));
  if (!arg)
    fail(opName, "missing operand");
  if (!arg->len)
    fail(opName, "operand is row-uniform; reductions take a column vector");
  if (arg->type != DType::F32)
    fail(opName, "operand must be f32, not " + std::string(name(arg->type)));
  Node n{NodeKind::Reduce};
  n.op = static_cast<uint8_t>(op);
  n.type = DType::F32;
  n.args = {std::move(arg)};
  return finish(std::move(n));
}

namespace {
void checkGroupOperand(const std::string &opName, const Expr &arg, int64_t group) {
  if (!arg)
    fail(opName, "missing operand");
  if (!arg->len)
    fail(opName, "operand is row-uniform; it takes a column vector");
  if (arg->type != DType::F32)
    fail(opName, "operand must be f32, not " + std::string(name(arg->type)));
  if (group < 1 || group > (int64_t{1} << 20))
    fail(opName, "group of " + std::to_string(group) + " columns (1 to 2^20)");
}
} // namespace

Expr group(ReduceOp op, Expr arg, int64_t group) {
  std::string opName = "group." + std::string(name(op));
  checkGroupOperand(opName, arg, group);
  Node n{NodeKind::Group};
  n.op = static_cast<uint8_t>(op);
  n.type = DType::F32;
  n.len = *arg->len / group;
  n.begin = group;
  n.args = {std::move(arg)};
  return finish(std::move(n));
}

Expr repeat(Expr arg, int64_t group) {
  checkGroupOperand("repeat", arg, group);
  Node n{NodeKind::Repeat};
  n.type = DType::F32;
  n.len = *arg->len * group;
  n.begin = group;
  n.args = {std::move(arg)};
  return finish(std::move(n));
}

Expr withArgs(const Node &node, std::vector<Expr> args) {
  switch (node.kind) {
  case NodeKind::Slice:
    return slice(std::move(args.at(0)), node.begin, *node.len);
  case NodeKind::Unary:
    return unary(node.unaryOp(), std::move(args.at(0)));
  case NodeKind::Binary:
    return binary(node.binaryOp(), std::move(args.at(0)), std::move(args.at(1)));
  case NodeKind::Select:
    return select(std::move(args.at(0)), std::move(args.at(1)), std::move(args.at(2)));
  case NodeKind::Fma:
    return fma(std::move(args.at(0)), std::move(args.at(1)), std::move(args.at(2)));
  case NodeKind::Reduce:
    return reduce(node.reduceOp(), std::move(args.at(0)));
  case NodeKind::Group:
    return group(node.reduceOp(), std::move(args.at(0)), node.groupSize());
  case NodeKind::Repeat:
    return repeat(std::move(args.at(0)), node.groupSize());
  default: {
    Node copy = node; // leaves have no operands
    return finish(std::move(copy));
  }
  }
}

bool structurallyEqual(const Expr &a, const Expr &b) {
  if (a.get() == b.get())
    return true;
  if (!a || !b || a->hash != b->hash || a->kind != b->kind || a->op != b->op ||
      a->type != b->type || a->len != b->len || !(a->begin == b->begin) ||
      a->param != b->param || a->args.size() != b->args.size())
    return false;
  if (detail::hashDouble(a->value) != detail::hashDouble(b->value))
    return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!structurallyEqual(a->args[i], b->args[i]))
      return false;
  return true;
}

} // namespace ir
} // namespace lanejit
