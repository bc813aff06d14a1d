#include "lower/verify_plan.h"

#include "lower/lowering_passes.h"

#include <lanejit/error.h>

#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace lanejit::lower {
namespace {

using analysis::Uniformity;

class PlanChecker {
public:
  explicit PlanChecker(const KernelPlan &plan) : plan_(plan) {
    forEachNode(plan.program, [&](const Expr &e) { number_.emplace(e.get(), number_.size()); });
  }

  std::vector<std::string> run() {
    checkLanes();
    checkOwnership();
    checkLengths();
    checkOrder();
    checkWrites();
    checkAlias();
    checkBounds();
    checkStreaming();
    return std::move(problems_);
  }

private:
  void fail(std::string problem) { problems_.push_back(std::move(problem)); }
  std::string node(const Node *n) const {
    auto it = number_.find(n);
    return it == number_.end() ? "a node outside the program" : "%" + std::to_string(it->second);
  }
  static std::string traversal(size_t i) { return "traversal " + std::to_string(i); }

  void checkLanes() {
    if (plan_.lanes != 4 && plan_.lanes != 8 && plan_.lanes != 16)
      fail("W = " + std::to_string(plan_.lanes) + " (expected 4, 8 or 16)");
    if (plan_.lanes * plan_.accumulators != kReductionLanes)
      fail("W x accumulators = " + std::to_string(plan_.lanes * plan_.accumulators) + ", not the " +
           std::to_string(kReductionLanes) +
           " virtual lanes every reduction's association assumes");
  }

  // Each write, reduction and workspace value has exactly one traversal.
  void checkOwnership() {
    const Program &p = plan_.program;
    std::vector<int> writeCount(p.writes.size(), 0);
    for (size_t i = 0; i < plan_.traversals.size(); ++i) {
      const Traversal &t = plan_.traversals[i];
      for (int w : t.writes) {
        if (w < 0 || w >= int(p.writes.size()))
          fail(traversal(i) + " names write " + std::to_string(w) + ", which does not exist");
        else
          ++writeCount[w];
      }
      for (const Expr &r : t.reductions) {
        if (r->kind != NodeKind::Reduce)
          fail(traversal(i) + " reduces " + node(r.get()) + ", which is not a reduction");
        if (!finisher_.emplace(r.get(), i).second)
          fail(node(r.get()) + " is reduced by two traversals");
      }
      for (const Expr &m : t.materializations) {
        if (!plan_.isMaterialized(m.get()))
          fail(traversal(i) + " materializes " + node(m.get()) + ", which has no workspace slot");
        if (plan_.uniformity.of(m) != Uniformity::Lane)
          fail(traversal(i) + " materializes " + node(m.get()) + ", which is not lane-varying");
        if (!materializer_.emplace(m.get(), i).second)
          fail(node(m.get()) + " is materialized by two traversals");
      }
    }
    for (size_t w = 0; w < writeCount.size(); ++w)
      if (writeCount[w] != 1)
        fail("write " + std::to_string(w) + " (to " + p.outputs[p.writes[w].output].name +
             ") is done by " + std::to_string(writeCount[w]) + " traversals, not 1");
    forEachNode(p, [&](const Expr &e) {
      if (e->kind == NodeKind::Reduce && !finisher_.count(e.get()))
        fail(node(e.get()) + " is a reduction no traversal computes");
    });
    std::unordered_set<const Node *> slots;
    for (const Expr &m : plan_.materialized) {
      if (!slots.insert(m.get()).second)
        fail(node(m.get()) + " has two workspace slots");
      if (!materializer_.count(m.get()))
        fail(node(m.get()) + " has a workspace slot no traversal fills");
    }
  }

  void checkLengths() {
    const Program &p = plan_.program;
    for (size_t i = 0; i < plan_.traversals.size(); ++i) {
      const Traversal &t = plan_.traversals[i];
      auto expect = [&](const std::optional<Dim> &len, const std::string &what) {
        if (!len || !(*len == t.len))
          fail(traversal(i) + " visits " + t.len.str() + " columns, but " + what + " has " +
               (len ? len->str() : std::string("none (row-uniform)")));
      };
      for (const Expr &m : t.materializations)
        expect(m->len, "materialized " + node(m.get()));
      for (const Expr &r : t.reductions)
        if (!r->args.empty())
          expect(r->args[0]->len, "the operand of " + node(r.get()));
      for (int w : t.writes)
        if (w >= 0 && w < int(p.writes.size()))
          expect(p.writes[w].len, "write " + std::to_string(w));
    }
  }

  // Depth order, and every reduction or workspace value a traversal reads
  // finished by an earlier one.
  void checkOrder() {
    for (size_t i = 0; i + 1 < plan_.traversals.size(); ++i)
      if (plan_.traversals[i].depth > plan_.traversals[i + 1].depth)
        fail(traversal(i + 1) + " (depth " + std::to_string(plan_.traversals[i + 1].depth) +
             ") runs after " + traversal(i) + " (depth " +
             std::to_string(plan_.traversals[i].depth) + ")");
    for (size_t i = 0; i < plan_.traversals.size(); ++i) {
      const Traversal &t = plan_.traversals[i];
      std::unordered_set<const Node *> seen;
      std::function<void(const Expr &)> visit = [&](const Expr &e) {
        if (!seen.insert(e.get()).second || plan_.uniformity.of(e) == Uniformity::Launch)
          return;
        if (e->kind == NodeKind::Reduce) {
          requireBefore(i, finisher_, e.get(), "reduction");
          return;
        }
        if (plan_.readsBack(t, e.get())) {
          requireBefore(i, materializer_, e.get(), "workspace value");
          return;
        }
        // A group or repeat reads its operand from the workspace, at
        // columns its own traversal does not visit.
        if (readsStoredOperand(*e) && !plan_.readsBack(t, e->args[0].get())) {
          fail(traversal(i) + " evaluates " + node(e.get()) + " but does not read its operand " +
               node(e->args[0].get()) + " from the workspace");
          return;
        }
        for (const Expr &a : e->args)
          visit(a);
      };
      for (const Expr &root : rootsOf(plan_, t))
        visit(root);
      if (t.bound) {
        visit(t.bound->limit);
        for (const Expr &f : t.bound->fills)
          visit(f);
      }
    }
  }

  void requireBefore(size_t reader, const std::unordered_map<const Node *, size_t> &done,
                     const Node *n, const char *what) {
    auto it = done.find(n);
    if (it == done.end())
      fail(traversal(reader) + " reads " + what + " " + node(n) + ", which no traversal computes");
    else if (it->second >= reader)
      fail(traversal(reader) + " reads " + what + " " + node(n) + " before " +
           traversal(it->second) + " has computed it");
  }

  void checkWrites() {
    const Program &p = plan_.program;
    for (size_t i = 0; i < plan_.traversals.size(); ++i) {
      const std::vector<int> &ws = plan_.traversals[i].writes;
      for (size_t a = 0; a < ws.size(); ++a)
        for (size_t b = a + 1; b < ws.size(); ++b) {
          if (std::max(ws[a], ws[b]) >= int(p.writes.size()) || std::min(ws[a], ws[b]) < 0)
            continue;
          const Write &x = p.writes[ws[a]], &y = p.writes[ws[b]];
          if (x.output == y.output && !provablyLessEqual(x.begin + x.len, y.begin) &&
              !provablyLessEqual(y.begin + y.len, x.begin))
            fail(traversal(i) + " holds writes " + std::to_string(ws[a]) + " and " +
                 std::to_string(ws[b]) + " to " + p.outputs[x.output].name +
                 ", not provably disjoint");
        }
    }
  }

  void checkAlias() {
    const Program &p = plan_.program;
    std::map<std::pair<int, int>, int> seen;
    for (const AliasPair &pair : plan_.alias) {
      if (pair.input < 0 || pair.input >= int(p.inputs.size()) || pair.output < 0 ||
          pair.output >= int(p.outputs.size())) {
        fail("an alias decision names input " + std::to_string(pair.input) + " / output " +
             std::to_string(pair.output) + ", which do not exist");
        continue;
      }
      ++seen[{pair.input, pair.output}];
      const std::string what =
          "alias " + p.inputs[pair.input].name + " / " + p.outputs[pair.output].name;
      bool exact = canAliasExactly(p.inputs[pair.input], p.outputs[pair.output]);
      if ((pair.handling == AliasHandling::StagedByCaller) == exact)
        fail(what + (exact ? ": a row tensor of the output's type left to the caller's staging"
                           : ": not a row tensor of the output's type, yet handled as exactly "
                             "aliased"));
      if (pair.handling == AliasHandling::ProvedInPlace) {
        std::string conflict = inPlaceConflict(plan_, pair.input, pair.output);
        if (!conflict.empty())
          fail(what + ": called proved in place, but " + conflict);
      }
      if (pair.reason.empty())
        fail(what + ": no reason given for the report");
    }
    for (size_t i = 0; i < p.inputs.size(); ++i)
      for (size_t o = 0; o < p.outputs.size(); ++o) {
        int n = seen[{int(i), int(o)}];
        if (n != 1)
          fail("alias " + p.inputs[i].name + " / " + p.outputs[o].name + " has " +
               std::to_string(n) + " decisions, not 1");
      }
  }

  void checkBounds() {
    for (size_t i = 0; i < plan_.traversals.size(); ++i) {
      const Traversal &t = plan_.traversals[i];
      if (!t.bound)
        continue;
      if (t.bound->fills.size() != t.writes.size())
        fail(traversal(i) + " has " + std::to_string(t.bound->fills.size()) + " fills for " +
             std::to_string(t.writes.size()) + " writes");
      const Expr &limit = t.bound->limit;
      if (limit->type != DType::I32 || plan_.uniformity.of(limit) == Uniformity::Lane)
        fail(traversal(i) + "'s column bound " + node(limit.get()) + " is not a row-uniform i32");
      // Its stores stop at the bound: whoever reads them back must stop there too.
      for (const Expr &m : t.materializations)
        for (size_t j = i + 1; j < plan_.traversals.size(); ++j)
          if (readsAtOwnColumns(plan_.traversals[j], m.get()) &&
              !sameBound(*t.bound, plan_.traversals[j].bound))
            fail(traversal(j) + " reads " + node(m.get()) + " back past the column bound of " +
                 traversal(i) + ", which stores it");
    }
  }

  // Streaming moves packet boundaries (an aligning first packet), which
  // only a traversal of independent columns may allow.
  void checkStreaming() {
    for (size_t i = 0; i < plan_.traversals.size(); ++i) {
      const Traversal &t = plan_.traversals[i];
      if (t.stream_stores && (t.writes.empty() || !t.reductions.empty() || t.bound ||
                              t.full != PacketKind::Dense || !t.inline_bodies))
        fail(traversal(i) + " streams its stores but is not a write-only traversal of dense, "
                            "inlined full packets without a column bound");
    }
  }

  static bool sameBound(const ColumnBound &a, const std::optional<ColumnBound> &b) {
    return b && a.limit.get() == b->limit.get() && a.col_begin == b->col_begin &&
           a.inclusive == b->inclusive;
  }

  // Whether a packet of `t` reads workspace value `n` (possibly at shifted
  // columns, through a slice: then no bound can vouch for it).
  bool readsAtOwnColumns(const Traversal &t, const Node *n) const {
    std::unordered_set<const Node *> seen;
    bool found = false;
    std::function<void(const Expr &)> visit = [&](const Expr &e) {
      if (found || !seen.insert(e.get()).second || plan_.uniformity.of(e) != Uniformity::Lane)
        return;
      if (e.get() == n) {
        found = true;
        return;
      }
      if (plan_.readsBack(t, e.get()))
        return;
      for (const Expr &a : e->args)
        visit(a);
    };
    for (const Expr &root : rootsOf(plan_, t))
      visit(root);
    return found;
  }

  const KernelPlan &plan_;
  std::unordered_map<const Node *, size_t> number_;
  std::unordered_map<const Node *, size_t> finisher_, materializer_;
  std::vector<std::string> problems_;
};

} // namespace

std::vector<std::string> verifyPlan(const KernelPlan &plan) {
  return PlanChecker(plan).run();
}

void verifyPlanOrThrow(const KernelPlan &plan, const std::string &after) {
  std::vector<std::string> problems = verifyPlan(plan);
  if (problems.empty())
    return;
  std::string message =
      "lanejit internal error (please report it): plan verifier, after " + after + ":";
  for (const std::string &p : problems)
    message += "\n  " + p;
  throw Error(Error::Kind::Compile, message);
}

} // namespace lanejit::lower
