// materialize-or-recompute (lowering_passes.h): a value that an earlier
// traversal of the row already computes and a later one evaluates again
// (masked softmax's exp(x - max): summed by one traversal, divided by the
// sum in the next) is either recomputed by the later traversal or stored to
// the workspace by the earlier one and loaded back. Either way each element
// goes through the same operations in the same order: the same bits.
#include "lower/lowering_passes.h"

#include <functional>
#include <unordered_set>

namespace lanejit::lower {
namespace {

bool isLane(const KernelPlan &plan, const Expr &e) {
  return plan.uniformity.of(e) == analysis::Uniformity::Lane;
}

bool isElementwise(const Node &n) {
  return n.kind == NodeKind::Unary || n.kind == NodeKind::Binary || n.kind == NodeKind::Select ||
         n.kind == NodeKind::Fma;
}

// The lane values a packet of `t` evaluates (or reads back), not below a
// value read back; with `ownColumns`, also not below a slice (whose operand
// is evaluated at shifted columns).
std::unordered_set<const Node *> evaluatedBy(const KernelPlan &plan, const Traversal &t,
                                             bool ownColumns) {
  std::unordered_set<const Node *> seen;
  std::function<void(const Expr &)> visit = [&](const Expr &e) {
    if (!isLane(plan, e) || !seen.insert(e.get()).second)
      return;
    if ((ownColumns && e->kind == NodeKind::Slice) || plan.readsBack(t, e.get()))
      return;
    for (const Expr &a : e->args)
      visit(a);
  };
  for (const Expr &root : rootsOf(plan, t))
    visit(root);
  return seen;
}

bool sameBound(const std::optional<ColumnBound> &a, const std::optional<ColumnBound> &b) {
  if (!a || !b)
    return !a && !b;
  return a->limit.get() == b->limit.get() && a->col_begin == b->col_begin &&
         a->inclusive == b->inclusive;
}

// What recomputing `e` costs a packet of `t`: opCost of every lane value
// below it that `t` would evaluate for it (shared operands counted too: a
// simple upper bound).
int recomputeCost(const KernelPlan &plan, const Traversal &t, const Expr &e) {
  std::unordered_set<const Node *> seen;
  int cost = 0;
  std::function<void(const Expr &)> visit = [&](const Expr &v) {
    if (!isLane(plan, v) || !seen.insert(v.get()).second)
      return;
    cost += opCost(*v);
    if (plan.readsBack(t, v.get()))
      return;
    for (const Expr &a : v->args)
      visit(a);
  };
  visit(e);
  return cost;
}

class Chooser {
public:
  explicit Chooser(KernelPlan &plan) : plan_(plan) { refresh(); }

  // Walks traversal `r`'s values from its roots down; a value an earlier
  // traversal computes is materialized there (and not walked further) when
  // recomputing it costs more than a store and a load.
  void visitReader(size_t r) {
    std::unordered_set<const Node *> seen;
    std::function<void(const Expr &)> visit = [&](const Expr &e) {
      if (!isLane(plan_, e) || !seen.insert(e.get()).second || e->kind == NodeKind::Slice ||
          plan_.readsBack(plan_.traversals[r], e.get()))
        return;
      if (int w = writerFor(r, e); w >= 0) {
        if (recomputeCost(plan_, plan_.traversals[r], e) > kMaterializeCost) {
          materialize(w, e);
          return;
        }
        ++recomputed_;
      }
      for (const Expr &a : e->args)
        visit(a);
    };
    for (const Expr &root : rootsOf(plan_, plan_.traversals[r]))
      visit(root);
  }

  int stored() const { return stored_; }
  int recomputed() const { return recomputed_; }

private:
  // The first traversal that evaluates `e`, if it is before `r`, evaluates
  // `e` at its own columns, and every traversal after it that evaluates `e`
  // can read it back (the same column bound when the first has one: its
  // stores stop there). -1 otherwise.
  int writerFor(size_t r, const Expr &e) const {
    if (!isElementwise(*e) || e->type != DType::F32 || !e->len ||
        !(*e->len == plan_.traversals[r].len))
      return -1;
    for (size_t w = 0; w < r; ++w) {
      if (!anywhere_[w].count(e.get()))
        continue;
      if (!evaluated_[w].count(e.get()))
        return -1; // the first evaluates it at shifted columns only
      const Traversal &writer = plan_.traversals[w];
      if (!(writer.len == *e->len))
        return -1;
      // A bounded writer's stores stop at its bound: every later reader
      // must stop there too and read at its own columns (not through a slice).
      for (size_t u = w + 1; u < plan_.traversals.size() && writer.bound; ++u)
        if (anywhere_[u].count(e.get()) &&
            (!evaluated_[u].count(e.get()) || !sameBound(writer.bound, plan_.traversals[u].bound)))
          return -1;
      return static_cast<int>(w);
    }
    return -1;
  }

  void materialize(int w, const Expr &e) {
    plan_.materialized.push_back(e);
    plan_.traversals[w].materializations.push_back(e);
    ++stored_;
    refresh(); // later traversals now read `e` back instead of evaluating its operands
  }

  void refresh() {
    evaluated_.clear();
    anywhere_.clear();
    for (const Traversal &t : plan_.traversals) {
      evaluated_.push_back(evaluatedBy(plan_, t, true));
      anywhere_.push_back(evaluatedBy(plan_, t, false));
    }
  }

  KernelPlan &plan_;
  // Per traversal: what it evaluates at its own columns, and at any columns.
  std::vector<std::unordered_set<const Node *>> evaluated_, anywhere_;
  int stored_ = 0, recomputed_ = 0;
};

} // namespace

LoweringResult materializeOrRecompute(KernelPlan &plan) {
  Chooser chooser(plan);
  for (size_t r = 1; r < plan.traversals.size(); ++r)
    chooser.visitReader(r);
  return {chooser.stored() > 0,
          std::to_string(chooser.stored()) +
              " re-read values materialized by the traversal that first computes them, " +
              std::to_string(chooser.recomputed()) +
              " recomputed (cost <= " + std::to_string(kMaterializeCost) + ")"};
}

} // namespace lanejit::lower
