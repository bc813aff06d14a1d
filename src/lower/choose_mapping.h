// The mapping rule: for which column counts a kernel runs rows across lanes
// (codegen/emit_rows_across_lanes.h: blocks of W rows share packets) instead of
// packet-local (one row over a packet's lanes). Decided once per kernel
// from its plan; a call then compares its C with the limit. Both mappings
// give the same bits, so the rule only decides speed
// (docs/architecture.md, "Mappings").
#pragma once

#include "lower/plan.h"

#include <cstdint>
#include <string>

namespace lanejit::lower {

// The widest row the rows-across-lanes entry is compiled for: its code
// grows with C (every column is emitted), and from a few packets per row
// on, packet-local rows use every lane anyway.
constexpr int64_t kMaxRowsAcrossLanesColumns = 64;

struct MappingRule {
  // Rows across lanes for calls with 1 <= C <= max_cols and at least
  // min_rows rows (one packet of rows: fewer run one masked block).
  int64_t max_cols = 0, min_rows = 0;
  // The widest C whose rows-across-lanes entry stays within the code-size
  // budget, whatever the speed rule says: what the tuner may try
  // (tune/tuner.h); 0 when the switch is off or rows are flattened.
  int64_t max_cols_by_size = 0;
  std::string reason; // why, for the compile report and `lanejit explain`
};

// Why the rows-across-lanes entry cannot be emitted for `program` at all,
// whatever the switch and C; empty when it can.
std::string rowsAcrossLanesUnavailable(const Program &program);

// `enabled`: the rows_across_lanes switch.
MappingRule chooseMapping(const KernelPlan &plan, bool enabled);

// Whether the rows-across-lanes entry at `cols` keeps rows in their row-
// major layout (P lanes or Q packets per row; codegen/emit_rows_across_
// lanes.cpp): every column vector spans columns [0, C) and every write is
// one whole row of its output. Otherwise (programs that slice at an
// offset, as RoPE) it gives each lane one row and transposes.
bool rowLayoutApplies(const Program &program, int64_t cols);
// The lanes P a row takes in that layout: the next power of two >= C, at
// most W (wider rows take whole packets).
int rowLayoutLanes(int64_t cols, int lanes);

// Estimated machine instructions per row of each mapping at `cols`
// columns (opCost weights): packet-local is per traversal (full packets +
// a masked tail) x body, plus per reduction its combine. Rows across lanes
// in the row layout: the block's code over the lanes a row takes (P, or Q
// packets), plus per reduction its share of the block's shuffle-and-op
// tree and broadcast; one row per lane: the block's per-column code over
// its W rows plus each row tensor's transposes. Rough, for the report: it
// says why the rule decides as it does, it is not what decides (the
// measured limit is).
struct MappingCosts {
  double packet_local = 0, rows_across_lanes = 0;
};
MappingCosts estimateMappingCosts(const KernelPlan &plan, int64_t cols);

} // namespace lanejit::lower
