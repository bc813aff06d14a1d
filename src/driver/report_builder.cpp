#include "driver/report_builder.h"

namespace lanejit {
namespace {

bool isOperation(const Node &n) {
  return n.kind == NodeKind::Unary || n.kind == NodeKind::Binary || n.kind == NodeKind::Select ||
         n.kind == NodeKind::Fma;
}

const char *handlingName(lower::AliasHandling h) {
  switch (h) {
  case lower::AliasHandling::StagedByCaller: return "staged-by-caller";
  case lower::AliasHandling::ProvedInPlace: return "proved-in-place";
  case lower::AliasHandling::GuardedRowStaging: return "guarded-row-staging";
  }
  return "?";
}

} // namespace

CompileReport buildReport(const lower::KernelPlan &plan,
                          const std::vector<passes::PassRecord> &passes,
                          const codegen::CodegenCounts &counts) {
  CompileReport r;
  r.program = plan.program.name;
  r.mapping.lanes = plan.lanes;
  r.mapping.local_lanes = plan.lanes;
  r.mapping.block_rows = plan.block_rows;
  r.mapping.accumulators = plan.accumulators;
  for (const passes::PassRecord &p : passes)
    r.passes.push_back({p.name, p.stage, p.ran, p.changed, p.ms, p.what});

  for (const lower::Traversal &t : plan.traversals) {
    CompileReport::Traversal rt;
    rt.len = t.len.str();
    rt.depth = t.depth;
    for (const Expr &e : lower::laneValuesOf(plan, t))
      rt.operations += isOperation(*e) && !plan.readsBack(t, e.get());
    rt.materializations = static_cast<int>(t.materializations.size());
    rt.reductions = static_cast<int>(t.reductions.size());
    rt.writes = static_cast<int>(t.writes.size());
    rt.dense_full_packets = t.full == lower::PacketKind::Dense;
    rt.inlined = t.inline_bodies;
    rt.bounded = t.bound.has_value();
    // Fused: more than one operation, or one pass producing several results,
    // with nothing in between stored to memory.
    int results = rt.materializations + rt.reductions + rt.writes;
    if (rt.operations >= 2 || results >= 2)
      ++r.fused_regions;
    r.traversals.push_back(rt);
  }
  for (const lower::AliasPair &p : plan.alias) {
    r.alias.push_back({plan.program.inputs[p.input].name, plan.program.outputs[p.output].name,
                       handlingName(p.handling), p.reason});
    r.guards_proved_unnecessary += p.handling == lower::AliasHandling::ProvedInPlace;
  }
  r.materialized_buffers = static_cast<int>(plan.materialized.size());
  r.staging_buffers = static_cast<int>(plan.guardedInputs().size());
  r.loads = counts.loads + counts.masked_loads;
  r.stores = counts.stores + counts.masked_stores;
  r.masked_loads = counts.masked_loads;
  r.masked_stores = counts.masked_stores;
  r.workspace_loads = counts.workspace_loads;
  r.workspace_stores = counts.workspace_stores;
  r.specialized_bodies = counts.dense_bodies;
  r.masked_bodies = counts.masked_bodies;
  r.helper_functions = counts.helper_functions;
  r.helper_calls = counts.helper_calls;
  r.inlined_bodies = counts.dense_bodies + counts.masked_bodies - counts.helper_functions;
  r.guards_emitted = counts.guards;
  r.guards_hoisted = counts.guards_hoisted;
  r.math_expansions = counts.math_expansions;
  return r;
}

} // namespace lanejit
