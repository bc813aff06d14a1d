// The three fusion passes (lowering_passes.h).
#include "lower/lowering_passes.h"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace lanejit::lower {
namespace {

// Nodes some reduction reads directly.
std::unordered_set<const Node *> reductionOperands(const KernelPlan &plan) {
  std::unordered_set<const Node *> operands;
  for (const Traversal &t : plan.traversals)
    for (const Expr &r : t.reductions)
      operands.insert(r->args[0].get());
  return operands;
}

// Stops materializing the values `fuse` selects: drops their workspace slot
// and the traversal that only computed them. Returns how many.
int unmaterialize(KernelPlan &plan, const std::function<bool(const Node *)> &fuse) {
  int count = 0;
  for (Traversal &t : plan.traversals) {
    auto &m = t.materializations;
    auto gone = std::remove_if(m.begin(), m.end(), [&](const Expr &e) { return fuse(e.get()); });
    count += static_cast<int>(m.end() - gone);
    m.erase(gone, m.end());
  }
  std::erase_if(plan.materialized, [&](const Expr &e) { return fuse(e.get()); });
  std::erase_if(plan.traversals, [](const Traversal &t) {
    return t.materializations.empty() && t.reductions.empty() && t.writes.empty();
  });
  return count;
}

bool provablyDisjoint(const Dim &b1, const Dim &l1, const Dim &b2, const Dim &l2) {
  return provablyLessEqual(b1 + l1, b2) || provablyLessEqual(b2 + l2, b1);
}

// Whether `from`'s writes may join `into`: writes into one output must be
// provably disjoint, or the single traversal could reorder overwrites.
bool writesDisjoint(const Program &program, const Traversal &into, const Traversal &from) {
  for (int a : into.writes)
    for (int b : from.writes) {
      const Write &x = program.writes[a], &y = program.writes[b];
      if (x.output == y.output && !provablyDisjoint(x.begin, x.len, y.begin, y.len))
        return false;
    }
  return true;
}

} // namespace

LoweringResult fusePointwise(KernelPlan &plan) {
  auto keep = reductionOperands(plan);
  keep.merge(storedOperands(plan.program));
  int n = unmaterialize(plan, [&](const Node *e) { return !keep.count(e); });
  return {n > 0, std::to_string(n) + " elementwise results fused into their users, " +
                     std::to_string(plan.materialized.size()) + " still materialized"};
}

LoweringResult fuseReductions(KernelPlan &plan) {
  auto operands = reductionOperands(plan);
  auto stored = storedOperands(plan.program);
  int n = unmaterialize(plan,
                        [&](const Node *e) { return operands.count(e) > 0 && !stored.count(e); });
  return {n > 0, std::to_string(n) + " reduction operands computed inside their reduction's "
                                     "traversal"};
}

LoweringResult fuseOutputs(KernelPlan &plan) {
  // Values only later depths read (operands of groups and repeats) may be
  // stored by any traversal of their depth: joining one that computes them
  // anyway (Q8_0's block inverses and its scales) saves their recompute.
  auto stored = storedOperands(plan.program);
  auto joinable = [&](const Traversal &t) {
    return std::all_of(t.materializations.begin(), t.materializations.end(),
                       [&](const Expr &e) { return stored.count(e.get()) > 0; });
  };
  // Joining `t` into an earlier traversal moves its packets before every
  // traversal in between: none of those may store a value `t` loads back.
  auto readsStoredAfter = [&](const Traversal &t, const std::vector<Traversal> &list,
                              size_t from) {
    for (const Expr &v : laneValuesOf(plan, t)) {
      if (!plan.readsBack(t, v.get()))
        continue;
      for (size_t j = from + 1; j < list.size(); ++j)
        for (const Expr &m : list[j].materializations)
          if (m.get() == v.get())
            return true;
    }
    return false;
  };
  std::vector<Traversal> merged;
  int joined = 0, refused = 0;
  for (Traversal &t : plan.traversals) {
    Traversal *into = nullptr;
    if (joinable(t))
      for (size_t i = 0; i < merged.size(); ++i) {
        Traversal &m = merged[i];
        if (joinable(m) && m.depth == t.depth && m.len == t.len &&
            !readsStoredAfter(t, merged, i)) {
          into = &m;
          break;
        }
      }
    if (into && !writesDisjoint(plan.program, *into, t)) {
      ++refused;
      into = nullptr;
    }
    if (!into) {
      merged.push_back(std::move(t));
      continue;
    }
    ++joined;
    into->materializations.insert(into->materializations.end(), t.materializations.begin(),
                                  t.materializations.end());
    into->reductions.insert(into->reductions.end(), t.reductions.begin(), t.reductions.end());
    into->writes.insert(into->writes.end(), t.writes.begin(), t.writes.end());
  }
  plan.traversals = std::move(merged);
  std::string what = std::to_string(joined) + " traversals joined others of equal length and "
                                              "depth (writes proved disjoint)";
  if (refused)
    what += ", " + std::to_string(refused) + " kept apart (writes not provably disjoint)";
  return {joined > 0, what};
}

} // namespace lanejit::lower
