// Work per row of a lowered plan, as a function of C: what the runtime's
// cost model (how many threads a call is worth) and its column split need
// to know of the plan, computed once per kernel from the plan alone.
#pragma once

#include "lower/plan.h"

#include <lanejit/dim.h>

#include <optional>
#include <vector>

namespace lanejit::lower {

struct RowCost {
  struct Pass {
    Dim len;      // columns per row
    int work = 0; // weighted operations per packet (math expansions ~8)
  };
  std::vector<Pass> passes;
  int lanes = 16;
  int row_streams = 0; // row tensors read or written: 4 bytes per column each
  // The estimate as a line, precomputed so a call's decision is a multiply
  // and a compare: ns per row ~ ns_per_column * C + ns_per_row.
  double ns_per_column = 0, ns_per_row = 0;
  // The column split: reductions of the plan (partials slots), and per
  // buffer (inputs, then outputs) its columns when it is a row tensor
  // (an output must not overlap it), else nothing.
  int reductions = 0;
  int inputs = 0;
  std::vector<std::optional<Dim>> row_tensor_cols;
};
RowCost rowCostOf(const KernelPlan &plan);

// Estimated nanoseconds of one row at C columns, on one thread.
double rowNanoseconds(const RowCost &cost, int64_t cols);

} // namespace lanejit::lower
