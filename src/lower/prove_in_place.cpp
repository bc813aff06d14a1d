// Alias analysis: when may an output be exactly an input (same address and
// row stride, so element (r, c) of one is element (r, c) of the other)?
//
// Rows are independent and visited in order, so only one row matters. In a
// row, traversals run one after another; inside a traversal, packet j
// covers traversal columns [jW, jW+W) in increasing j, and a packet does all
// its loads before its stores (codegen guarantees it). A load of input
// columns [rb, rb+len) in traversal tr and a write of output columns
// [wb, wb+len) in traversal tw are then safe together when
//   tw > tr                — every read is done before the first write;
//   tw == tr and wb <= rb  — column rb+j is read by packet j, written by
//                            packet j-(rb-wb), never later;
//   the ranges are provably disjoint.
// Anything else may read a value the kernel already overwrote.
#include "lower/lowering_passes.h"

#include <functional>
#include <set>

namespace lanejit::lower {
namespace {

struct Access {
  int traversal;
  Dim begin, len;
};

// Reads of input `param` by traversal `t`, as column ranges: a load at
// `begin` reached through slices at offsets o1, o2, ... reads columns
// begin + o1 + o2 + ... + j in packet j. Stops at values read back from the
// workspace and at row- or launch-uniform values (computed elsewhere).
void collectReads(const KernelPlan &plan, const Traversal &t, int index, int param,
                  std::vector<Access> &reads) {
  std::set<std::pair<const Node *, std::string>> seen;
  std::function<void(const Expr &, const Dim &)> visit = [&](const Expr &e, const Dim &offset) {
    if (plan.uniformity.of(e) != analysis::Uniformity::Lane ||
        !seen.insert({e.get(), offset.str()}).second || plan.readsBack(t, e.get()))
      return;
    if (e->kind == NodeKind::Load && e->param == param)
      reads.push_back({index, e->begin + offset, t.len});
    Dim inner = e->kind == NodeKind::Slice ? offset + e->begin : offset;
    for (const Expr &a : e->args)
      visit(a, inner);
  };
  for (const Expr &root : rootsOf(plan, t))
    visit(root, 0);
}

bool disjoint(const Access &a, const Access &b) {
  return provablyLessEqual(a.begin + a.len, b.begin) || provablyLessEqual(b.begin + b.len, a.begin);
}

std::string range(const std::string &name, const Access &a) {
  return name + "[" + a.begin.str() + " +" + a.len.str() + "] in traversal " +
         std::to_string(a.traversal);
}

} // namespace

std::string inPlaceConflict(const KernelPlan &plan, int input, int output) {
  const Program &p = plan.program;
  std::vector<Access> reads, writes;
  for (size_t t = 0; t < plan.traversals.size(); ++t) {
    collectReads(plan, plan.traversals[t], static_cast<int>(t), input, reads);
    for (int w : plan.traversals[t].writes)
      if (p.writes[w].output == output)
        writes.push_back({static_cast<int>(t), p.writes[w].begin, p.writes[w].len});
  }
  for (const Access &w : writes)
    for (const Access &r : reads) {
      bool safe = w.traversal > r.traversal ||
                  (w.traversal == r.traversal && provablyLessEqual(w.begin, r.begin)) ||
                  disjoint(w, r);
      if (!safe)
        return range(p.outputs[output].name, w) + " may overwrite " +
               range(p.inputs[input].name, r) + " before it is read";
    }
  return "";
}

LoweringResult proveInPlace(KernelPlan &plan) {
  int proved = 0;
  for (AliasPair &pair : plan.alias) {
    if (pair.handling == AliasHandling::StagedByCaller)
      continue;
    std::string conflict = inPlaceConflict(plan, pair.input, pair.output);
    if (conflict.empty()) {
      pair.handling = AliasHandling::ProvedInPlace;
      pair.reason = "in place proved safe: every element is read before it is written";
      ++proved;
    } else {
      pair.handling = AliasHandling::GuardedRowStaging;
      pair.reason = "guarded (row staged when in place): " + conflict;
    }
  }
  return {proved > 0, std::to_string(proved) + " input/output pairs proved safe in place, " +
                          std::to_string(plan.guardedInputs().size()) +
                          " inputs keep a row-staging guard"};
}

} // namespace lanejit::lower
