// bench/floor.h — the per-case floor (issue 33): a lower bound on one call's
// time from this machine's own numbers, max(bytes / the faster of copy and
// triad bandwidth at the case's footprint, executed vector µops / issue
// width / core clock), and lanejit's time over it. docs/bench.md, "The
// floor", says what each part counts and ignores.
#pragma once

#include "records.h"

#include <lanejit/check.h>
#include <lanejit/kernel.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lanejit::bench {

// Which calls to single-step for a call of rows x cols: a few rows (a
// group of `row_group` at a time) at the real C, or, when the entry takes
// any C (`any_cols`) and C is long, at two short column counts with C's
// remainder modulo 256, so the per-row count extrapolates along C.
struct StepPlan {
  std::string method;
  int64_t row_group = 1;
  std::vector<std::pair<int64_t, int64_t>> calls; // (cols, rows), rows [0, rows)
};
StepPlan planSteps(int64_t rows, int64_t cols, int64_t row_group, bool any_cols);
// For an entry compiled for one C that runs a dense call's rows as one row
// (flatten_rows): two row counts whose R x C keep the call's remainder
// modulo 256 ("flat rows", extrapolated along rows), or the whole call.
StepPlan planFlatRows(int64_t rows, int64_t cols);

// One call of rows x cols from the stepped counts: (instructions, vector).
// nullopt when the stepped calls are not what `method` needs.
std::optional<std::pair<double, double>> perCallCounts(const ComputeFloorRecord &compute,
                                                       int64_t rows, int64_t cols);

// The compute part for the kernel's default entry at the case's shape, on
// the case's own buffers (the calls run in a child; nothing here writes
// them). `max_steps` bounds the single-stepping of the whole case.
ComputeFloorRecord measureComputeFloor(const Kernel &kernel, check::Case &c,
                                       int64_t max_steps = 300'000);

// The floor from its parts and the first variant's time (memory part:
// filled in by the caller, or memory_unavailable set).
void completeFloor(FloorRecord &floor, double time_s);

} // namespace lanejit::bench
