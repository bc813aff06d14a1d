// Uniformity analysis: for every node, the widest scope over which its value
// cannot change.
//
//   Launch — the same for the whole call (constants, dims, scalar inputs);
//   Row    — the same for every column of a row (row index, reductions);
//   Lane   — varies across the columns of a row (loads, column indices).
//
// Codegen computes Launch values once per call before the row loop and Row
// values once per row before the column loops that use them; only Lane
// values are computed per packet. Alias guards (later) use the same facts
// to be checked once per launch.
#pragma once

#include <lanejit/ir.h>

#include <unordered_map>

namespace lanejit::analysis {

enum class Uniformity : uint8_t { Launch = 0, Row = 1, Lane = 2 };

class UniformityInfo {
public:
  Uniformity of(const Node *node) const { return scope_.at(node); }
  Uniformity of(const Expr &e) const { return of(e.get()); }
  void set(const Node *node, Uniformity u) { scope_[node] = u; }

private:
  std::unordered_map<const Node *, Uniformity> scope_;
};

UniformityInfo analyzeUniformity(const Program &program);

} // namespace lanejit::analysis
