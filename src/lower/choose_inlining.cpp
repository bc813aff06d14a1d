// choose-inlining: packet bodies inlined into the row loop or emitted as
// helper functions, by the cost rule (lowering_passes.h) or forced.
#include "lower/lowering_passes.h"

#include <algorithm>

namespace lanejit::lower {

int opCost(const Node &node) {
  if (node.kind == NodeKind::Group) // a gather and a step per column of the run
    return static_cast<int>(std::min<int64_t>(2 * node.groupSize(), 1000));
  if (node.kind == NodeKind::Repeat)
    return 4;
  if (node.kind != NodeKind::Unary)
    return 1;
  UnaryOp op = node.unaryOp();
  if (op == UnaryOp::Exp || op == UnaryOp::Log || op == UnaryOp::Sigmoid)
    return 31;
  if (op == UnaryOp::Tanh || op == UnaryOp::Erf)
    return 41;
  return 1;
}

namespace {

// Rough machine instructions for one packet of `t`: each elementwise node
// counts 1, each inline math expansion its measured size (docs/math.md).
int bodyCost(const KernelPlan &plan, const Traversal &t) {
  int cost = static_cast<int>(t.writes.size() + t.materializations.size());
  for (const Expr &e : laneValuesOf(plan, t))
    cost += plan.readsBack(t, e.get()) ? 1 : opCost(*e); // read back: a load, not expanded
  return cost;
}

} // namespace

LoweringResult chooseInlining(KernelPlan &plan, CompileOptions::Inline policy) {
  using Inline = CompileOptions::Inline;
  int inlined = 0;
  for (Traversal &t : plan.traversals) {
    if (policy != Inline::CostRule) {
      t.inline_bodies = policy == Inline::Always;
    } else {
      // Copies of the full-packet body: K in the unrolled group loop and up
      // to K-1 for the leftover packets (K = 1 without reductions).
      int copies = t.reductions.empty() ? 1 : 2 * plan.accumulators - 1;
      t.inline_bodies = bodyCost(plan, t) * copies <= kInlineBudget;
    }
    inlined += t.inline_bodies;
  }
  std::string rule =
      policy == Inline::CostRule
          ? "cost rule: inline when body cost x copies <= " + std::to_string(kInlineBudget)
          : std::string("forced ") + (policy == Inline::Always ? "inline" : "helpers");
  return {true, std::to_string(inlined) + " of " + std::to_string(plan.traversals.size()) +
                    " traversals inline their packet bodies (" + rule + ")"};
}

} // namespace lanejit::lower
