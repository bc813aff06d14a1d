// The FP64 oracle: evaluates a Program from its IR, one row at a time, with
// every value held as a double. It shares no code with the compiler below
// the IR, so a wrong lowering cannot also make the oracle wrong.
#include <lanejit/element_types.h>
#include <lanejit/error.h>
#include <lanejit/reference.h>
#include <lanejit/shape_binding.h>
#include <lanejit/verify.h>

#include "scalar_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace lanejit {
namespace {

[[noreturn]] void fail(const std::string &message) {
  throw Error(Error::Kind::Bind, message);
}

// One node's value in the current row: a single double for row-uniform
// nodes, otherwise one double per column. Bool is 0/1, i32 is exact.
struct Value {
  bool uniform = true;
  double s = 0;
  std::vector<double> v;
  double at(size_t j) const { return uniform ? s : v[j]; }
};

// A node with its Dims evaluated for the bound C and operands as indices.
struct Step {
  const Node *node = nullptr;
  std::vector<size_t> args;
  int64_t len = -1; // -1: row-uniform
  int64_t begin = 0;
};

int64_t integerDim(const Dim &dim, int64_t c, const std::string &what) {
  std::optional<int64_t> v = dim.evaluate(c);
  if (!v)
    fail(dim.str() + " is not an integer for C = " + std::to_string(c) + " (" + what + ")");
  return *v;
}

// The same checks bindShape makes, against a given shape.
void checkInputs(const Program &p, std::span<const BufferRef> inputs, Shape shape) {
  if (inputs.size() != p.inputs.size()) {
    std::string names;
    for (const Param &in : p.inputs)
      names += (names.empty() ? "" : ", ") + in.name;
    fail("program '" + p.name + "' expects " + std::to_string(p.inputs.size()) +
         (p.inputs.size() == 1 ? " input (" : " inputs (") + names + "), got " +
         std::to_string(inputs.size()));
  }
  if (shape.rows < 0 || shape.cols < 0)
    fail("shape " + std::to_string(shape.rows) + " x " + std::to_string(shape.cols) +
         " is negative");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Param &decl = p.inputs[i];
    const BufferRef &b = inputs[i];
    std::string who = "input '" + decl.name + "'";
    if (decl.kind == ParamKind::Scalar) {
      if (!b.data)
        fail(who + ": null data pointer");
      continue;
    }
    int64_t cols = evaluateDim(decl.cols, shape.cols, who);
    int64_t rows = decl.kind == ParamKind::RowTensor ? shape.rows : 1;
    if (b.rows != rows || b.cols != cols)
      fail(who + ": expected " + std::to_string(rows) + " x " + std::to_string(cols) +
           " columns, got " + std::to_string(b.rows) + " x " + std::to_string(b.cols));
    if (decl.kind == ParamKind::RowTensor && b.stride() < b.cols)
      fail(who + ": row stride " + std::to_string(b.stride()) + " is smaller than its " +
           std::to_string(b.cols) + " columns");
    if (!b.data && rows > 0 && cols > 0)
      fail(who + ": null data pointer");
    byteSpan(b, rows, bytesOf(decl.type), who);
  }
}

class Evaluator {
public:
  Evaluator(const Program &p, std::span<const BufferRef> inputs, Shape shape)
      : p_(p), inputs_(inputs), shape_(shape) {
    std::unordered_map<const Node *, size_t> index;
    forEachNode(p, [&](const Expr &e) {
      std::string at = "%" + std::to_string(steps_.size());
      Step step;
      step.node = e.get();
      for (const Expr &a : e->args)
        step.args.push_back(index.at(a.get()));
      if (e->len)
        step.len = evaluateDim(*e->len, shape.cols, at + " length");
      if (e->kind == NodeKind::Load || e->kind == NodeKind::Slice)
        step.begin = evaluateDim(e->begin, shape.cols, at + " begin");
      else if (e->kind == NodeKind::ColIndex || e->kind == NodeKind::DimValue)
        step.begin = integerDim(e->begin, shape.cols, at);
      index.emplace(e.get(), steps_.size());
      steps_.push_back(std::move(step));
    });
    for (const Write &w : p.writes) {
      std::string what = "write to output '" + p.outputs[w.output].name + "'";
      writes_.push_back({index.at(w.value.get()), evaluateDim(w.begin, shape.cols, what),
                         evaluateDim(w.len, shape.cols, what)});
    }
    values_.resize(steps_.size());
  }

  std::vector<ReferenceOutput> run() {
    std::vector<ReferenceOutput> outs;
    for (const Output &o : p_.outputs) {
      ReferenceOutput out;
      out.rows = shape_.rows;
      out.cols = evaluateDim(o.cols, shape_.cols, "output '" + o.name + "'");
      // NaN marks anything no write reaches (the verifier rules that out).
      out.values.assign(out.rows * out.cols, std::numeric_limits<double>::quiet_NaN());
      outs.push_back(std::move(out));
    }
    for (int64_t r = 0; r < shape_.rows; ++r) {
      for (size_t k = 0; k < steps_.size(); ++k)
        evaluate(steps_[k], values_[k], r);
      for (size_t i = 0; i < writes_.size(); ++i)
        store(writes_[i], outs[p_.writes[i].output], r);
    }
    return outs;
  }

private:
  // A write with its value's step and its columns for the bound C.
  struct BoundWrite {
    size_t value;
    int64_t begin, len;
  };

  void store(const BoundWrite &w, ReferenceOutput &out, int64_t r) {
    const Value &value = values_[w.value];
    double *row = out.values.data() + r * out.cols + w.begin;
    for (int64_t j = 0; j < w.len; ++j)
      row[j] = value.at(j); // row-uniform values broadcast
  }

  template <class F> static void map(Value &out, int64_t len, F f) {
    out.uniform = len < 0;
    if (out.uniform) {
      out.s = f(0);
      return;
    }
    out.v.resize(len);
    for (int64_t j = 0; j < len; ++j)
      out.v[j] = f(j);
  }

  void evaluate(const Step &step, Value &out, int64_t r) {
    const Node &n = *step.node;
    auto arg = [&](size_t i) -> const Value & { return values_[step.args[i]]; };
    switch (n.kind) {
    case NodeKind::Load: return load(step, out, r);
    case NodeKind::Const: return map(out, -1, [&](int64_t) { return n.value; });
    case NodeKind::RowIndex: return map(out, -1, [&](int64_t) { return static_cast<double>(r); });
    case NodeKind::DimValue:
      return map(out, -1, [&](int64_t) { return static_cast<double>(step.begin); });
    case NodeKind::ColIndex:
      return map(out, step.len, [&](int64_t j) { return static_cast<double>(step.begin + j); });
    case NodeKind::Slice:
      return map(out, step.len, [&](int64_t j) { return arg(0).v[step.begin + j]; });
    case NodeKind::Unary: {
      DType t = n.args[0]->type;
      return map(out, step.len,
                 [&](int64_t j) { return reference::unary(n.unaryOp(), t, arg(0).at(j)); });
    }
    case NodeKind::Binary: {
      DType t = n.args[0]->type;
      return map(out, step.len, [&](int64_t j) {
        return reference::binary(n.binaryOp(), t, arg(0).at(j), arg(1).at(j));
      });
    }
    case NodeKind::Select:
      return map(out, step.len,
                 [&](int64_t j) { return arg(0).at(j) != 0 ? arg(1).at(j) : arg(2).at(j); });
    case NodeKind::Fma:
      return map(out, step.len,
                 [&](int64_t j) { return std::fma(arg(0).at(j), arg(1).at(j), arg(2).at(j)); });
    case NodeKind::Reduce:
      return map(out, -1, [&](int64_t) { return reference::reduce(n.reduceOp(), arg(0).v); });
    case NodeKind::Group: {
      const int64_t g = n.groupSize();
      std::vector<double> run(static_cast<size_t>(g));
      return map(out, step.len, [&](int64_t j) {
        std::copy_n(arg(0).v.begin() + j * g, g, run.begin());
        return reference::reduce(n.reduceOp(), run);
      });
    }
    case NodeKind::Repeat:
      return map(out, step.len, [&](int64_t j) { return arg(0).v[j / n.groupSize()]; });
    }
  }

  // Inputs are read as stored: bf16 and f16 widen exactly, as a kernel's
  // loads do.
  void load(const Step &step, Value &out, int64_t r) {
    const Node &n = *step.node;
    const BufferRef &b = inputs_[n.param];
    DType type = p_.inputs[n.param].type;
    auto at = [&](int64_t index) { return static_cast<double>(readElement(b.data, type, index)); };
    switch (p_.inputs[n.param].kind) {
    case ParamKind::Scalar: return map(out, -1, [&](int64_t) { return at(0); });
    case ParamKind::ColVector:
      return map(out, step.len, [&](int64_t j) { return at(step.begin + j); });
    case ParamKind::RowTensor: {
      int64_t row = r * b.stride() + step.begin;
      return map(out, step.len, [&](int64_t j) { return at(row + j); });
    }
    }
  }

  const Program &p_;
  std::span<const BufferRef> inputs_;
  Shape shape_;
  std::vector<Step> steps_;
  std::vector<BoundWrite> writes_;
  std::vector<Value> values_;
};

} // namespace

std::vector<ReferenceOutput> evaluateReference(const Program &program,
                                               std::span<const BufferRef> inputs, Shape shape) {
  verifyOrThrow(program); // out-of-range loads would read outside the buffers
  checkInputs(program, inputs, shape);
  return Evaluator(program, inputs, shape).run();
}

} // namespace lanejit
