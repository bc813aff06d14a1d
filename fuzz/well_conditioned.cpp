// See well_conditioned.h for what this decides and why.
#include "well_conditioned.h"

#include <lanejit/ir.h>

#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace lanejit::fuzz {
namespace {

constexpr double kDelta = 0x1p-20;
constexpr double kAgree = check::kTolerance / 4;
constexpr double kLargest = 1e36;  // f32 overflows at 3.4e38
constexpr double kSmallest = 1e-30; // f32 loses precision below 1.2e-38

enum class Pattern { Uniform, Alternating, AlternatingNegated };

Expr f32(double v) {
  return ir::constant(DType::F32, v);
}

// 1 + s * delta, s = +-1: uniform nodes by their number's parity, column
// vectors also by column parity.
Expr factor(const Node &node, Pattern pattern, int number) {
  double sign = pattern == Pattern::AlternatingNegated ? -1 : 1;
  if (pattern == Pattern::Uniform)
    return f32(1 + kDelta);
  if (number % 2)
    sign = -sign;
  if (node.rowUniform())
    return f32(1 + sign * kDelta);
  Expr col = ir::colIndex(Dim(0), *node.len);
  Expr even = ir::binary(BinaryOp::Eq, ir::binary(BinaryOp::Mod, col, ir::constant(DType::I32, 2)),
                         ir::constant(DType::I32, 0));
  return ir::select(even, f32(1 + sign * kDelta), f32(1 - sign * kDelta));
}

// The program with every f32 value multiplied by its factor.
Program perturbed(const Program &program, Pattern pattern) {
  std::unordered_map<const Node *, Expr> done;
  int number = 0;
  forEachNode(program, [&](const Expr &e) {
    std::vector<Expr> args;
    for (const Expr &a : e->args)
      args.push_back(done.at(a.get()));
    Expr n = args.empty() ? e : ir::withArgs(*e, args);
    if (n->type == DType::F32)
      n = ir::binary(BinaryOp::Mul, n, factor(*n, pattern, number));
    done.emplace(e.get(), n);
    ++number;
  });
  Program q = program;
  for (Write &w : q.writes)
    w.value = done.at(w.value.get());
  return q;
}

// The program plus one output of two columns per row: the largest and the
// smallest non-zero finite magnitude among its f32 values in that row.
Program withRangeOutput(const Program &program, std::string &name) {
  Expr inf = f32(std::numeric_limits<double>::infinity());
  Expr largest = f32(0), smallest = inf;
  forEachNode(program, [&](const Expr &e) {
    if (e->type != DType::F32)
      return;
    Expr mag = ir::unary(UnaryOp::Abs, e);
    Expr finite = ir::binary(BinaryOp::Lt, mag, inf);
    Expr big = ir::select(finite, mag, f32(0));
    Expr small = ir::select(ir::binary(BinaryOp::And, finite, ir::binary(BinaryOp::Ne, mag, f32(0))),
                            mag, inf);
    if (!e->rowUniform()) {
      big = ir::reduce(ReduceOp::Max, big);
      small = ir::reduce(ReduceOp::Min, small);
    }
    largest = ir::binary(BinaryOp::Max, largest, big);
    smallest = ir::binary(BinaryOp::Min, smallest, small);
  });
  name = "range";
  while (program.inputIndex(name) >= 0 || program.outputIndex(name) >= 0)
    name += "_";
  Program q = program;
  q.outputs.push_back({name, DType::F32, Dim(2)});
  int out = static_cast<int>(q.outputs.size()) - 1;
  q.writes.push_back({out, Dim(0), Dim(1), largest});
  q.writes.push_back({out, Dim(1), Dim(1), smallest});
  return q;
}

enum class Class { Finite, PlusInf, MinusInf, NaN };
Class classOf(double v) {
  if (std::isnan(v))
    return Class::NaN;
  if (std::isinf(v))
    return v > 0 ? Class::PlusInf : Class::MinusInf;
  return Class::Finite;
}

bool agrees(double v, double w) {
  if (classOf(v) != classOf(w))
    return false;
  return classOf(v) != Class::Finite || std::abs(v - w) <= kAgree * (1 + std::abs(v));
}

} // namespace

ReferenceCheck wellConditionedElements(const check::Case &c) {
  ReferenceCheck result;
  std::vector<BufferRef> inputs = c.inputRefs();
  result.reference = evaluateReference(c.program, inputs, c.shape);
  for (const ReferenceOutput &ref : result.reference)
    result.comparable.emplace_back(ref.values.size(), 1);

  std::string range_name;
  std::vector<ReferenceOutput> ranged =
      evaluateReference(withRangeOutput(c.program, range_name), inputs, c.shape);
  const ReferenceOutput &range = ranged.back();
  for (int64_t r = 0; r < range.rows; ++r) {
    bool tame = range.at(r, 0) <= kLargest && range.at(r, 1) >= kSmallest;
    if (tame)
      continue;
    for (size_t o = 0; o < result.reference.size(); ++o)
      for (int64_t col = 0; col < result.reference[o].cols; ++col)
        result.comparable[o][r * result.reference[o].cols + col] = 0;
  }

  for (Pattern pattern : {Pattern::Uniform, Pattern::Alternating, Pattern::AlternatingNegated}) {
    std::vector<ReferenceOutput> p = evaluateReference(perturbed(c.program, pattern), inputs, c.shape);
    for (size_t o = 0; o < p.size(); ++o)
      for (size_t i = 0; i < p[o].values.size(); ++i)
        if (!agrees(result.reference[o].values[i], p[o].values[i]))
          result.comparable[o][i] = 0;
  }
  for (const std::vector<uint8_t> &mask : result.comparable)
    for (uint8_t ok : mask)
      ++(ok ? result.compared : result.skipped);
  return result;
}

} // namespace lanejit::fuzz
