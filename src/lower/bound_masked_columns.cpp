// The bound-masked-columns pass (lowering_passes.h): index-set splitting on
// a row-uniform column predicate, as masked softmax's `c <= r mod C`.
#include "lower/lowering_passes.h"

#include <cmath>
#include <cstring>

namespace lanejit::lower {
namespace {

bool isLane(const KernelPlan &plan, const Expr &e) {
  return plan.uniformity.of(e) == analysis::Uniformity::Lane;
}

// `p` as a bound: col(begin) <= u, col < u, u >= col or u > col, with u an
// i32 that does not vary across the row.
std::optional<ColumnBound> boundOf(const KernelPlan &plan, const Expr &p, const Dim &len) {
  if (p->kind != NodeKind::Binary)
    return std::nullopt;
  BinaryOp op = p->binaryOp();
  Expr col = p->args[0], limit = p->args[1];
  bool inclusive;
  if (op == BinaryOp::Le || op == BinaryOp::Lt) {
    inclusive = op == BinaryOp::Le;
  } else if (op == BinaryOp::Ge || op == BinaryOp::Gt) {
    std::swap(col, limit);
    inclusive = op == BinaryOp::Ge;
  } else {
    return std::nullopt;
  }
  if (col->kind != NodeKind::ColIndex || !col->len || !(*col->len == len) ||
      limit->type != DType::I32 || isLane(plan, limit))
    return std::nullopt;
  return ColumnBound{limit, col->begin, inclusive, {}};
}

// Whether `c` is bit for bit the value that leaves a reduction unchanged.
bool isIdentity(const Expr &c, ReduceOp op) {
  if (c->kind != NodeKind::Const || c->type != DType::F32)
    return false;
  float v = static_cast<float>(c->value);
  switch (op) {
  case ReduceOp::Sum:
  case ReduceOp::Mean: return v == 0 && std::signbit(v); // -0.0: -0 + x == x for every x
  case ReduceOp::Max: return std::isinf(v) && v < 0;
  case ReduceOp::Min: return std::isinf(v) && v > 0;
  }
  return false;
}

} // namespace

LoweringResult boundMaskedColumns(KernelPlan &plan) {
  int bounded = 0;
  for (Traversal &t : plan.traversals) {
    if (!t.materializations.empty() || (t.reductions.empty() && t.writes.empty()))
      continue;
    // Every reduction operand and write value: select(p, value, other), one p.
    const Node *predicate = nullptr;
    std::optional<ColumnBound> bound;
    auto accept = [&](const Expr &e) {
      if (e->kind != NodeKind::Select || !isLane(plan, e))
        return false;
      if (!predicate) {
        predicate = e->args[0].get();
        bound = boundOf(plan, e->args[0], t.len);
      }
      return bound && e->args[0].get() == predicate;
    };
    bool ok = true;
    for (const Expr &r : t.reductions)
      ok = ok && accept(r->args[0]) && isIdentity(r->args[0]->args[2], r->reduceOp());
    for (int w : t.writes) {
      const Expr &value = plan.program.writes[w].value;
      ok = ok && accept(value) && !isLane(plan, value->args[2]);
      if (ok)
        bound->fills.push_back(value->args[2]);
    }
    if (!ok)
      continue;
    t.bound = std::move(bound);
    // The select that names `predicate` is the first reduction's operand or
    // write's value; keep it, so codegen can skip the compare per packet.
    const Expr &first =
        t.reductions.empty() ? plan.program.writes[t.writes[0]].value : t.reductions[0]->args[0];
    t.bound->predicate = first->args[0];
    ++bounded;
  }
  return {bounded > 0, std::to_string(bounded) + " traversals stop at a row-uniform column bound"};
}

} // namespace lanejit::lower
