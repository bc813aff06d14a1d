#include "lower/plan.h"

#include <algorithm>
#include <unordered_map>

namespace lanejit::lower {
namespace {

// Depth of a value: how many reduction traversals must finish before it can
// be computed. A reduction's own depth is its operand's depth + 1.
class DepthAnalysis {
public:
  explicit DepthAnalysis(const Program &program) {
    forEachNode(program, [&](const Expr &e) {
      int d = 0;
      for (const Expr &a : e->args)
        d = std::max(d, depth_.at(a.get()));
      if (e->kind == NodeKind::Reduce)
        d += 1;
      depth_[e.get()] = d;
    });
  }
  int of(const Expr &e) const { return depth_.at(e.get()); }

private:
  std::unordered_map<const Node *, int> depth_;
};

Traversal &traversalFor(std::vector<Traversal> &list, int depth, const Dim &len) {
  for (Traversal &t : list)
    if (t.depth == depth && t.len == len)
      return t;
  list.push_back(Traversal{len, depth});
  return list.back();
}

} // namespace

KernelPlan planKernel(const Program &program, const CompileOptions &options, int lanes) {
  KernelPlan plan;
  plan.program = program;
  plan.uniformity = analysis::analyzeUniformity(program);
  plan.lanes = lanes;
  plan.accumulators = kReductionLanes / lanes;
  plan.block_rows = options.block_rows;

  DepthAnalysis depth(program);
  std::vector<Traversal> traversals;
  // Reductions in canonical node order, so plans are deterministic.
  forEachNode(program, [&](const Expr &e) {
    if (e->kind != NodeKind::Reduce)
      return;
    // The reduce at depth d is computed by a traversal of depth d-1.
    traversalFor(traversals, depth.of(e) - 1, *e->args[0]->len).reductions.push_back(e);
  });
  for (size_t i = 0; i < program.writes.size(); ++i) {
    const Write &w = program.writes[i];
    traversalFor(traversals, depth.of(w.value), w.len).writes.push_back(static_cast<int>(i));
  }
  std::stable_sort(traversals.begin(), traversals.end(),
                   [](const Traversal &a, const Traversal &b) { return a.depth < b.depth; });
  for (Traversal &t : traversals)
    t.full = options.specialize_full_packets ? PacketKind::Dense : PacketKind::Masked;
  plan.traversals = std::move(traversals);
  return plan;
}

} // namespace lanejit::lower
