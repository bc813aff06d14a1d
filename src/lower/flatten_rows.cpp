// flatten-rows: an all-elementwise program treats a call's rows as one long
// row when every row tensor is dense (row stride = the row's width, C or a
// fixed number), so a 17x65 call runs 69 full packets
// and one tail instead of 17 x (4 full + 1 tail of one lane). Every element
// is computed by the same operations either way (a lane's bits do not
// depend on its packet or mask), so no bit changes. Codegen checks density
// once per call and otherwise runs row by row.
#include "lower/lowering_passes.h"

namespace lanejit::lower {
namespace {

// Why `plan` cannot run flattened, or "" when it can.
std::string obstacle(const KernelPlan &plan) {
  const Program &p = plan.program;
  if (plan.traversals.size() != 1)
    return "more than one traversal";
  // The row's width: C, or a fixed width (lanejit.torch specialises
  // programs to the C they were traced with).
  const Traversal &t = plan.traversals[0];
  const Dim width = t.len;
  if (!t.reductions.empty() || !t.materializations.empty() || t.bound)
    return "the traversal is not one elementwise pass over the row";
  if (!plan.workspaceSlots().empty())
    return "the row uses the workspace";
  for (const Param &in : p.inputs)
    if (in.kind == ParamKind::ColVector || (in.kind == ParamKind::RowTensor && !(in.cols == width)))
      return "input " + in.name + " is not a scalar or an [R, " + width.str() + "] row tensor";
  for (const Output &out : p.outputs)
    if (!(out.cols == width))
      return "output " + out.name + " is not [R, " + width.str() + "]";
  for (const Write &w : p.writes)
    if (!(w.begin == Dim(0)) || !(w.len == width))
      return "a write covers part of a row";
  std::string why;
  forEachNode(p, [&](const Expr &e) {
    bool columnWise = e->kind == NodeKind::RowIndex || e->kind == NodeKind::ColIndex ||
                      e->kind == NodeKind::Slice || e->kind == NodeKind::Reduce ||
                      readsStoredOperand(*e) ||
                      (e->kind == NodeKind::Load && !e->rowUniform() && !(e->begin == Dim(0)));
    if (columnWise && why.empty())
      why = "it reads a row or column index, a slice, a reduction, a group or a repeat";
  });
  return why;
}

} // namespace

LoweringResult flattenRows(KernelPlan &plan) {
  std::string why = obstacle(plan);
  plan.flatten_rows = why.empty();
  if (!plan.flatten_rows)
    return {false, "rows stay rows: " + why};
  return {true, "a call's rows run as one row of rows x " + plan.traversals[0].len.str() +
                    " columns when every row tensor is dense"};
}

} // namespace lanejit::lower
