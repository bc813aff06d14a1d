// The canonical text of a Program (grammar: docs/text-format.md).
//
// Canonical means: a Program prints one way only. Nodes are numbered in the
// order forEachNode visits them, declarations keep Program order, each write
// follows the node it stores, and f32 constants use the shortest decimal that
// reads back to the same float. That is what makes print(parse(print(p)))
// equal print(p) byte for byte.
#include <lanejit/text.h>

#include "text/lexer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace lanejit {
namespace {

std::string columns(const Dim &begin, const Dim &len) {
  return "[" + begin.str() + ":" + (begin + len).str() + "]";
}

std::string constantText(DType type, double value) {
  switch (type) {
  case DType::Bool: return value != 0 ? "true" : "false";
  case DType::I32:
    if (value == std::trunc(value) && value >= INT32_MIN && value <= INT32_MAX)
      return std::to_string(static_cast<int64_t>(value));
    break; // not a valid i32 (ir::constant rejects it); show it anyway
  case DType::F32:
    if (std::isnan(value))
      return "nan"; // NaN payloads and signs are not kept (ir::constant)
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(value));
    return std::string(buf, r.ptr);
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

std::string paramShape(const Param &p) {
  std::string type(name(p.type));
  switch (p.kind) {
  case ParamKind::Scalar: return type;
  case ParamKind::ColVector: return type + "[" + p.cols.str() + "]";
  case ParamKind::RowTensor: return type + "[R, " + p.cols.str() + "]";
  }
  return type;
}

std::string operands(const Node &node,
                     const std::function<std::string(const Expr &)> &operandName) {
  std::string s;
  for (size_t i = 0; i < node.args.size(); ++i)
    s += (i ? ", " : " ") + operandName(node.args[i]);
  return s;
}

} // namespace

std::string printNode(const Node &node, const Program &program,
                      const std::function<std::string(const Expr &)> &operandName) {
  Dim len = node.len.value_or(Dim(0));
  switch (node.kind) {
  case NodeKind::Load: {
    bool known = node.param >= 0 && static_cast<size_t>(node.param) < program.inputs.size();
    std::string s = "load " + (known ? text::printName(program.inputs[node.param].name)
                                     : "<input#" + std::to_string(node.param) + ">");
    return node.len ? s + columns(node.begin, len) : s;
  }
  case NodeKind::Const:
    return "const " + std::string(name(node.type)) + " " + constantText(node.type, node.value);
  case NodeKind::RowIndex: return "row";
  case NodeKind::ColIndex: return "col" + columns(node.begin, len);
  case NodeKind::DimValue: return "dim " + node.begin.str();
  case NodeKind::Slice: return "slice" + operands(node, operandName) + columns(node.begin, len);
  case NodeKind::Unary: return std::string(name(node.unaryOp())) + operands(node, operandName);
  case NodeKind::Binary: return std::string(name(node.binaryOp())) + operands(node, operandName);
  case NodeKind::Select: return "select" + operands(node, operandName);
  case NodeKind::Fma: return "fma" + operands(node, operandName);
  case NodeKind::Reduce:
    return "reduce." + std::string(name(node.reduceOp())) + operands(node, operandName);
  case NodeKind::Group:
    return "group." + std::string(name(node.reduceOp())) + operands(node, operandName) + " by " +
           std::to_string(node.groupSize());
  case NodeKind::Repeat:
    return "repeat" + operands(node, operandName) + " by " + std::to_string(node.groupSize());
  }
  return "<unknown node kind>";
}

std::string print(const Program &program) {
  std::unordered_map<const Node *, size_t> ids;
  std::vector<Expr> order;
  forEachNode(program, [&](const Expr &e) {
    ids.emplace(e.get(), order.size());
    order.push_back(e);
  });
  auto operandName = [&](const Expr &e) -> std::string {
    auto it = ids.find(e.get());
    return it == ids.end() ? "%<unnumbered>" : "%" + std::to_string(it->second);
  };

  std::string out = "program " + text::printName(program.name) + " {\n";
  for (const Param &p : program.inputs)
    out += "  in " + text::printName(p.name) + ": " + paramShape(p) + "\n";
  for (const Output &o : program.outputs)
    out += "  out " + text::printName(o.name) + ": " + std::string(name(o.type)) + "[R, " +
           o.cols.str() + "]\n";

  // A write is printed as soon as the node it stores has been printed.
  size_t nextWrite = 0;
  auto printReadyWrites = [&](size_t printedNodes) {
    for (; nextWrite < program.writes.size(); ++nextWrite) {
      const Write &w = program.writes[nextWrite];
      auto it = ids.find(w.value.get());
      if (it != ids.end() && it->second >= printedNodes)
        return;
      bool known = w.output >= 0 && static_cast<size_t>(w.output) < program.outputs.size();
      out += "  " +
             (known ? text::printName(program.outputs[w.output].name)
                    : "<output#" + std::to_string(w.output) + ">") +
             columns(w.begin, w.len) + " = " + operandName(w.value) + "\n";
    }
  };
  printReadyWrites(0);
  for (size_t i = 0; i < order.size(); ++i) {
    out += "  %" + std::to_string(i) + " = " + printNode(*order[i], program, operandName) + "\n";
    printReadyWrites(i + 1);
  }
  return out + "}\n";
}

} // namespace lanejit
