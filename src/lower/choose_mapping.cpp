#include "lower/choose_mapping.h"

#include "lower/lowering_passes.h"

#include <algorithm>
#include <cmath>

namespace lanejit::lower {
namespace {

// Rows across lanes pays a transpose per W x W block of every row tensor it
// reads or writes (W log2 W shuffles) where packet-local pays, per row and
// reduction, a tail, a combine and a row set-up; past a few packets per row
// the latter is amortised. Measured (docs/architecture.md, "Mappings").
constexpr int64_t kMaxPacketsPerRow = 4;
// The emitted code of one block: instructions (opCost) over every column
// the program evaluates. Bounds compile time and code size.
constexpr double kBlockBudget = 24000;

// Estimated instructions of one block at C columns: each column-vector
// node once per column, a row-uniform one once.
double blockCost(const Program &program, int64_t cols) {
  double cost = 0;
  forEachNode(program, [&](const Expr &e) {
    double len = 1;
    if (e->len)
      len = std::max(0.0, (double(e->len->coeff()) * cols + double(e->len->offset())) /
                              double(e->len->denom()));
    cost += opCost(*e) * len;
  });
  return cost;
}

} // namespace

MappingRule chooseMapping(const KernelPlan &plan, bool enabled) {
  if (!enabled)
    return {0, 0, "switch rows_across_lanes off"};
  if (plan.flatten_rows)
    return {0, 0, "all-elementwise: dense rows already run as one long row (flatten-rows)"};
  int64_t limit = std::min<int64_t>(kMaxRowsAcrossLanesColumns, kMaxPacketsPerRow * plan.lanes);
  while (limit > 0 && blockCost(plan.program, limit) > kBlockBudget)
    --limit;
  if (limit == 0)
    return {0, 0, "the program is too large to emit once per column"};
  return {limit, plan.lanes,
          "rows of at most " + std::to_string(kMaxPacketsPerRow) +
              " packets, where a row's set-up, tail and combine cost more than transposing "
              "W x W blocks; fewer rows than W would run one masked block"};
}

} // namespace lanejit::lower
