// lanejit/ir.h — the row-program IR.
//
// A Program maps named inputs to named outputs, row by row. Within a row an
// expression is either *row-uniform* (one value per row: reductions, scalar
// inputs, the row index, constants) or a *column vector* of a known length
// (a Dim in the symbolic column count C). Elementwise operations broadcast
// row-uniform operands over columns; reductions turn a column vector into a
// row-uniform value. Nodes are immutable and shared (a DAG); every node is
// created by a validating make function that throws lanejit::Error naming
// the operation and the problem. See docs/architecture.md for semantics.
#pragma once

#include <lanejit/dim.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lanejit {

// Element types. Values inside a program are f32, i32 (indices) or bool
// (comparisons). bf16, f16 and i8 are storage types: an input or output may
// hold them, a node never does. A load widens them exactly to f32; a write
// rounds an f32 once, to nearest-even (i8: saturated to [-127, 127], NaN
// stores 0), as docs/element-types.md defines.
enum class DType : uint8_t { F32, I32, Bool, BF16, F16, I8 };
std::string_view name(DType type);
// bf16, f16 and i8: types of buffers only.
bool isStorageOnly(DType type);
// The type a load of a buffer of `storage` gives, and a write to it takes.
DType valueTypeOf(DType storage);
// Bytes per element in memory (bool: 1, as a byte; only f32, bf16, f16 and
// i8 buffers exist).
int64_t bytesOf(DType type);

// The op set, each list declared once and expanded wherever it is needed
// (printer, parser, evaluator, codegen). Second field: the text-format name.
#define LANEJIT_UNARY_OPS(X)                                                                       \
  X(Neg, "neg")         /* -x                                   f32, i32 */                        \
  X(Abs, "abs")         /* |x|                                  f32, i32 */                        \
  X(Exp, "exp")         /* e^x, inline polynomial                    f32 */                        \
  X(Log, "log")         /* natural log, inline polynomial            f32 */                        \
  X(Sqrt, "sqrt")       /* correctly rounded                         f32 */                        \
  X(Rsqrt, "rsqrt")     /* 1 / sqrt(x), two correctly rounded ops    f32 */                        \
  X(Tanh, "tanh")       /* inline, built on exp                      f32 */                        \
  X(Sigmoid, "sigmoid") /* 1 / (1 + e^-x)                            f32 */                        \
  X(Erf, "erf")         /* error function, inline polynomial         f32 */                        \
  X(Not, "not")         /* logical not                              bool */                        \
  X(ToF32, "tof32")     /* i32 -> f32, round to nearest even         i32 */                        \
  X(ToI32, "toi32")     /* f32 -> i32 toward zero; NaN and out of        */                        \
                        /* range give INT32_MIN (as x86 does)        f32 */

#define LANEJIT_BINARY_OPS(X)                                                                      \
  X(Add, "add")                                                                                    \
  X(Sub, "sub")                                                                                    \
  X(Mul, "mul")                                                                                    \
  X(Div, "div") /* f32: IEEE; i32: floor division, x/0 = 0 */                                      \
  X(Mod, "mod") /* i32 only: floored, sign of the divisor; x mod 0 = 0 */                          \
  X(Min, "min") /* IEEE 754-2019 minimum: NaN wins, -0 < +0 */                                     \
  X(Max, "max") /* IEEE 754-2019 maximum: NaN wins, -0 < +0 */                                     \
  X(Lt, "lt")                                                                                      \
  X(Le, "le")                                                                                      \
  X(Gt, "gt")                                                                                      \
  X(Ge, "ge")                                                                                      \
  X(Eq, "eq")                                                                                      \
  X(Ne, "ne")                                                                                      \
  X(And, "and") /* bool */                                                                         \
  X(Or, "or")   /* bool */

#define LANEJIT_REDUCE_OPS(X)                                                                      \
  X(Sum, "sum")                                                                                    \
  X(Max, "max")                                                                                    \
  X(Min, "min")                                                                                    \
  X(Mean, "mean") /* sum / length */

// Node kinds. Row-uniform vs column-vector is a property of each node (its
// length), not of its kind.
#define LANEJIT_NODE_KINDS(X)                                                                      \
  X(Load)     /* input[begin : begin+len], or a scalar input (no length) */                        \
  X(Const)    /* a literal of the node's type, row-uniform */                                      \
  X(RowIndex) /* the row number r, i32, row-uniform */                                             \
  X(ColIndex) /* begin, begin+1, ..., begin+len-1 as i32 */                                        \
  X(DimValue) /* the value of a Dim for the bound C, i32, row-uniform */                           \
  X(Slice)    /* arg[begin : begin+len] of a column vector */                                      \
  X(Unary)                                                                                         \
  X(Binary)                                                                                        \
  X(Select) /* cond ? a : b, elementwise */                                                        \
  X(Fma)    /* a*b + c with one rounding; only where the program asks */                           \
  X(Reduce) /* row reduction of a column vector, row-uniform result */                             \
  X(Group)  /* element j reduces arg[j*g : j*g+g], in column order (g = begin) */                  \
  X(Repeat) /* element j is arg[j / g]: each element g times (g = begin) */

#define LANEJIT_ENUM_ENTRY(Name, ...) Name,
enum class UnaryOp : uint8_t { LANEJIT_UNARY_OPS(LANEJIT_ENUM_ENTRY) };
enum class BinaryOp : uint8_t { LANEJIT_BINARY_OPS(LANEJIT_ENUM_ENTRY) };
enum class ReduceOp : uint8_t { LANEJIT_REDUCE_OPS(LANEJIT_ENUM_ENTRY) };
#undef LANEJIT_ENUM_ENTRY
#define LANEJIT_ENUM_ENTRY(Name) Name,
enum class NodeKind : uint8_t { LANEJIT_NODE_KINDS(LANEJIT_ENUM_ENTRY) };
#undef LANEJIT_ENUM_ENTRY

std::string_view name(UnaryOp op);
std::string_view name(BinaryOp op);
std::string_view name(ReduceOp op);
std::string_view name(NodeKind kind);

struct Node;

// A shared, immutable reference to a node. Copying is cheap.
class Expr {
public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}

  const Node *operator->() const { return node_.get(); }
  const Node &operator*() const { return *node_; }
  const Node *get() const { return node_.get(); }
  explicit operator bool() const { return node_ != nullptr; }

  // Column slice [begin, end) of a column vector (x[:, begin:end]).
  Expr cols(Dim begin, Dim end) const;

private:
  std::shared_ptr<const Node> node_;
};

enum class ParamKind : uint8_t {
  RowTensor, // [R, cols] with a row stride >= cols
  ColVector, // [cols], shared by every row
  Scalar,    // one value for the whole launch
};
std::string_view name(ParamKind kind);

struct Param {
  std::string name;
  ParamKind kind = ParamKind::RowTensor;
  DType type = DType::F32;
  Dim cols = Dim::C(); // unused for scalars
};

// Outputs are row tensors [R, cols].
struct Output {
  std::string name;
  DType type = DType::F32;
  Dim cols = Dim::C();
};

struct Node {
  NodeKind kind;
  uint8_t op = 0; // UnaryOp / BinaryOp / ReduceOp for those kinds
  DType type = DType::F32;
  std::optional<Dim> len; // column count; nullopt means row-uniform
  Dim begin;              // Load, ColIndex, Slice: first column; DimValue: dim;
                          // Group, Repeat: columns per group (a constant)
  int param = -1;         // Load: index into Program::inputs
  double value = 0;       // Const: the value, exactly representable in type
  std::vector<Expr> args;
  uint64_t hash = 0; // structural: equal for structurally equal subgraphs

  bool rowUniform() const { return !len.has_value(); }
  UnaryOp unaryOp() const { return static_cast<UnaryOp>(op); }
  BinaryOp binaryOp() const { return static_cast<BinaryOp>(op); }
  ReduceOp reduceOp() const { return static_cast<ReduceOp>(op); } // Reduce, Group
  int64_t groupSize() const { return begin.offset(); }             // Group, Repeat
};

// Validating constructors (Halide-style make): each checks operand types and
// lengths and throws Error(Kind::Verify) with a message naming the op.
namespace ir {
Expr load(int param, const Param &decl, Dim begin, Dim len);
Expr loadScalar(int param, const Param &decl);
Expr constant(DType type, double value);
Expr rowIndex();
Expr colIndex(Dim begin, Dim len);
Expr dimValue(Dim dim);
Expr slice(Expr arg, Dim begin, Dim len);
Expr unary(UnaryOp op, Expr arg);
Expr binary(BinaryOp op, Expr a, Expr b);
Expr select(Expr cond, Expr a, Expr b);
Expr fma(Expr a, Expr b, Expr c);
Expr reduce(ReduceOp op, Expr arg);
// Reductions of each run of `group` columns of an f32 column vector: a
// vector `group` times shorter (its length must divide at bind time). Each
// run is combined left to right, so a sum's bits do not depend on W.
Expr group(ReduceOp op, Expr arg, int64_t group);
// Each element of an f32 column vector `group` times: the inverse shape
// of group(), to apply a per-group value to its columns.
Expr repeat(Expr arg, int64_t group);
// A copy of `node` with new operands (same kind, op and attributes).
Expr withArgs(const Node &node, std::vector<Expr> args);
bool structurallyEqual(const Expr &a, const Expr &b);
} // namespace ir

// Writes `value` (a column vector of length len, or a row-uniform value
// broadcast over len columns) into columns [begin, begin+len) of an output.
struct Write {
  int output = 0;
  Dim begin;
  Dim len;
  Expr value;
};

struct Program {
  std::string name;
  std::vector<Param> inputs;
  std::vector<Output> outputs;
  std::vector<Write> writes;

  // Structural hash over declarations and the expression DAG.
  uint64_t hash() const;
  int inputIndex(std::string_view name) const;  // -1 if absent
  int outputIndex(std::string_view name) const; // -1 if absent
  // The element type of buffer `i` in the native entry's order: inputs,
  // then outputs.
  DType bufferType(size_t i) const {
    return i < inputs.size() ? inputs[i].type : outputs.at(i - inputs.size()).type;
  }
};

// `program` with every f32 input and output held as `storage` instead (bf16
// or f16); buffers declared of another type (a Q8_0 program's f16 scales,
// i8 values) stay as they are. Its values and operations are unchanged,
// since loads widen and writes round. Throws Error(Kind::Verify) for a
// storage type other than f32, bf16 or f16.
Program withStorage(Program program, DType storage);

// Calls fn(node) once per reachable node, operands before users, in the
// canonical order the printer numbers them.
void forEachNode(const Program &program, const std::function<void(const Expr &)> &fn);

} // namespace lanejit
