// Work per row of a lowered plan (lower/row_cost.h).
#include "lower/row_cost.h"

namespace lanejit::lower {
namespace {

// Rough single-thread rates of the project's machines (README, "Threads"):
// a weighted vector operation per ~0.3 ns, ~20 bytes per ns from memory.
// The model only has to tell 17x65 (a few hundred ns) from work that is
// worth a thread (tens of us); a factor of two either way changes nothing.
constexpr double kNsPerPacketOp = 0.3;
constexpr double kBytesPerNs = 20;
constexpr int kMathWork = 8;

bool isOperation(const Node &n) {
  return n.kind == NodeKind::Unary || n.kind == NodeKind::Binary || n.kind == NodeKind::Select ||
         n.kind == NodeKind::Fma || n.kind == NodeKind::Load;
}

int workOf(const Node &n) {
  if (n.kind != NodeKind::Unary)
    return 1;
  switch (n.unaryOp()) {
  case UnaryOp::Exp:
  case UnaryOp::Log:
  case UnaryOp::Tanh:
  case UnaryOp::Sigmoid: return kMathWork;
  default: return 1;
  }
}

} // namespace

RowCost rowCostOf(const KernelPlan &plan) {
  RowCost cost;
  cost.lanes = plan.lanes;
  for (const Traversal &t : plan.traversals) {
    RowCost::Pass pass{t.len, 1};
    for (const Expr &e : laneValuesOf(plan, t))
      if (isOperation(*e) && !plan.readsBack(t, e.get()))
        pass.work += workOf(*e);
    pass.work +=
        static_cast<int>(t.materializations.size() + t.reductions.size() + t.writes.size());
    cost.passes.push_back(pass);
    cost.reductions += static_cast<int>(t.reductions.size());
    // len = (coeff * C + offset) / denom columns, ceil(len / W) packets.
    double perPacket = pass.work * kNsPerPacketOp;
    cost.ns_per_column += perPacket * t.len.coeff() / (double(t.len.denom()) * plan.lanes);
    cost.ns_per_row += perPacket * (1 + t.len.offset() / (double(t.len.denom()) * plan.lanes));
  }
  cost.inputs = static_cast<int>(plan.program.inputs.size());
  for (const Param &p : plan.program.inputs) {
    cost.row_streams += p.kind == ParamKind::RowTensor;
    cost.row_tensor_cols.push_back(p.kind == ParamKind::RowTensor ? std::optional<Dim>(p.cols)
                                                                  : std::nullopt);
  }
  for (const Output &o : plan.program.outputs)
    cost.row_tensor_cols.push_back(o.cols);
  cost.row_streams += static_cast<int>(plan.program.outputs.size());
  cost.ns_per_column += 4.0 * cost.row_streams / kBytesPerNs;
  return cost;
}

double rowNanoseconds(const RowCost &cost, int64_t cols) {
  return static_cast<double>(cols) * cost.ns_per_column + cost.ns_per_row;
}

} // namespace lanejit::lower
