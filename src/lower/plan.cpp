#include "lower/plan.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_map>

namespace lanejit::lower {
namespace {

// Depth of a value: how many reduction traversals must finish before it can
// be computed. A reduction's own depth is its operand's depth + 1; so is a
// group's or a repeat's, whose operand a traversal before it stores whole.
std::unordered_map<const Node *, int> depths(const Program &program) {
  std::unordered_map<const Node *, int> depth;
  forEachNode(program, [&](const Expr &e) {
    int d = 0;
    for (const Expr &a : e->args)
      d = std::max(d, depth.at(a.get()));
    if (e->kind == NodeKind::Reduce || readsStoredOperand(*e))
      d += 1;
    depth[e.get()] = d;
  });
  return depth;
}

bool isElementwise(const Node &n) {
  return n.kind == NodeKind::Unary || n.kind == NodeKind::Binary || n.kind == NodeKind::Select ||
         n.kind == NodeKind::Fma;
}

bool onlyMaterializes(const Traversal &t) {
  return !t.materializations.empty() && t.reductions.empty() && t.writes.empty();
}

} // namespace

std::unordered_set<const Node *> storedOperands(const Program &program) {
  std::unordered_set<const Node *> operands;
  forEachNode(program, [&](const Expr &e) {
    if (readsStoredOperand(*e))
      operands.insert(e->args[0].get());
  });
  return operands;
}

int KernelPlan::slotOf(const Node *node) const {
  for (size_t i = 0; i < materialized.size(); ++i)
    if (materialized[i].get() == node)
      return static_cast<int>(i);
  return -1;
}

bool KernelPlan::readsBack(const Traversal &t, const Node *node) const {
  return isMaterialized(node) && std::none_of(t.materializations.begin(), t.materializations.end(),
                                              [&](const Expr &m) { return m.get() == node; });
}

std::vector<int> KernelPlan::guardedInputs() const {
  std::vector<int> inputs;
  for (const AliasPair &p : alias)
    if (p.handling == AliasHandling::GuardedRowStaging &&
        std::find(inputs.begin(), inputs.end(), p.input) == inputs.end())
      inputs.push_back(p.input);
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

std::vector<Dim> KernelPlan::workspaceSlots() const {
  std::vector<Dim> slots;
  for (const Expr &e : materialized)
    slots.push_back(*e->len);
  for (int i : guardedInputs())
    slots.push_back(program.inputs[i].cols);
  return slots;
}

int64_t workspaceFloats(const std::vector<Dim> &slots, int64_t cols) {
  int64_t total = 0;
  for (const Dim &d : slots) {
    int64_t n = d.evaluate(cols).value_or(0);
    total += (std::max<int64_t>(n, 0) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
  }
  return total;
}

std::vector<Expr> rootsOf(const KernelPlan &plan, const Traversal &t) {
  std::vector<Expr> roots = t.materializations;
  for (const Expr &r : t.reductions)
    roots.push_back(r->args[0]);
  for (int w : t.writes)
    roots.push_back(plan.program.writes[w].value);
  return roots;
}

std::vector<Expr> laneValuesOf(const KernelPlan &plan, const Traversal &t) {
  std::unordered_map<const Node *, bool> seen;
  std::vector<Expr> values;
  std::function<void(const Expr &)> visit = [&](const Expr &e) {
    if (!seen.emplace(e.get(), true).second || plan.uniformity.of(e) != analysis::Uniformity::Lane)
      return;
    if (!plan.readsBack(t, e.get()))
      for (const Expr &a : e->args)
        visit(a);
    values.push_back(e);
  };
  for (const Expr &root : rootsOf(plan, t))
    visit(root);
  return values;
}

KernelPlan initialPlan(const Program &program, const CompileOptions &options, int lanes) {
  KernelPlan plan;
  plan.program = program;
  plan.uniformity = analysis::analyzeUniformity(program);
  plan.lanes = lanes;
  plan.llvm_loop_unroll = options.llvm_loop_unroll;
  plan.leftover_loop = options.leftover_loop;
  plan.single_max_accumulator = options.single_max_accumulator;
  plan.unroll_output_loops = options.unroll_output_loops;
  plan.in_row_tails = options.in_row_tails;
  plan.integer_absmax = options.integer_absmax;
  plan.accumulators = kReductionLanes / lanes;
  plan.block_rows = options.block_rows;
  auto depth = depths(program);
  auto stored = storedOperands(program);

  // Canonical node order: operands before users, so each value's traversal
  // comes after those of the values it reads.
  forEachNode(program, [&](const Expr &e) {
    if ((isElementwise(*e) || readsStoredOperand(*e) || stored.count(e.get())) &&
        plan.uniformity.of(e) == analysis::Uniformity::Lane) {
      plan.materialized.push_back(e);
      Traversal t{*e->len, depth.at(e.get())};
      t.materializations.push_back(e);
      plan.traversals.push_back(std::move(t));
    }
    if (e->kind == NodeKind::Reduce) {
      // The reduce at depth d is computed by a traversal of depth d-1.
      Traversal t{*e->args[0]->len, depth.at(e.get()) - 1};
      t.reductions.push_back(e);
      plan.traversals.push_back(std::move(t));
    }
  });
  for (size_t i = 0; i < program.writes.size(); ++i) {
    const Write &w = program.writes[i];
    Traversal t{w.len, depth.at(w.value.get())};
    t.writes.push_back(static_cast<int>(i));
    plan.traversals.push_back(std::move(t));
  }
  for (size_t i = 0; i < program.inputs.size(); ++i)
    for (size_t o = 0; o < program.outputs.size(); ++o) {
      AliasPair p{static_cast<int>(i), static_cast<int>(o)};
      if (!canAliasExactly(program.inputs[i], program.outputs[o])) {
        p.handling = AliasHandling::StagedByCaller;
        p.reason = program.inputs[i].kind != ParamKind::RowTensor
                       ? "not a row tensor: any overlap stages the whole input before the launch"
                       : "element types differ: any overlap stages the whole input before the "
                         "launch";
      } else {
        p.reason = "guarded (row staged when in place): in-place proofs are off";
      }
      plan.alias.push_back(p);
    }
  orderTraversals(plan);
  return plan;
}

void orderTraversals(KernelPlan &plan) {
  std::stable_sort(plan.traversals.begin(), plan.traversals.end(),
                   [](const Traversal &a, const Traversal &b) {
                     if (a.depth != b.depth)
                       return a.depth < b.depth;
                     return onlyMaterializes(a) && !onlyMaterializes(b);
                   });
}

std::string describePlan(const KernelPlan &plan) {
  // Node numbers as the printer numbers them, so the plan reads with the IR.
  std::unordered_map<const Node *, int> number;
  forEachNode(plan.program, [&](const Expr &e) { number.emplace(e.get(), number.size()); });
  std::ostringstream out;
  out << "; plan: W=" << plan.lanes << ", " << plan.accumulators
      << " accumulators per reduction, guards " << (plan.hoist_guards ? "hoisted" : "per row")
      << "\n";
  if (plan.branchless_tail)
    out << ";   max/min tails join accumulator 0\n";
  if (plan.fill_stores)
    out << ";   fills are vector stores, not memset calls\n";
  if (plan.flatten_rows)
    out << ";   rows flattened into one row of rows x C columns when every row tensor is dense\n";
  for (size_t i = 0; i < plan.traversals.size(); ++i) {
    const Traversal &t = plan.traversals[i];
    out << ";   traversal " << i << ": len " << t.len.str() << ", depth " << t.depth << ", "
        << (t.full == PacketKind::Dense ? "dense" : "masked") << " full packets, "
        << (t.inline_bodies ? "inlined" : "helper") << " bodies;";
    if (t.tail_masks)
      out << " sum tail by lane masks;";
    if (t.stream_stores)
      out << " non-temporal stores from " << plan.stream_min_bytes << " bytes per output;";
    if (t.prefetch_next_row)
      out << " prefetch next row from " << plan.prefetch_min_bytes << " bytes of row data, "
          << t.prefetch_min_row_bytes << " per row;";
    if (t.bound)
      out << " live columns to %" << number.at(t.bound->limit.get())
          << (t.bound->inclusive ? " inclusive" : "") << ";";
    for (const Expr &e : t.materializations)
      out << " materialize %" << number.at(e.get());
    for (const Expr &e : t.reductions)
      out << " reduce %" << number.at(e.get());
    for (int w : t.writes)
      out << " write " << plan.program.outputs[plan.program.writes[w].output].name << "["
          << plan.program.writes[w].begin.str() << " +" << plan.program.writes[w].len.str() << "]";
    out << "\n";
  }
  for (const AliasPair &p : plan.alias)
    out << ";   alias " << plan.program.inputs[p.input].name << " / "
        << plan.program.outputs[p.output].name << ": " << p.reason << "\n";
  return out.str();
}

} // namespace lanejit::lower
