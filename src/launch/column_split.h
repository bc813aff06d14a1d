// Few long rows across threads: when a call is worth more threads than it
// has rows, each row's traversals are split by column chunks
// (lower::kChunkColumns) and run as pool phases, one per traversal, with a
// barrier (the end of a parallelFor) between them. A reduction's chunks
// leave their 64-lane partials in a buffer; the next phase finishes them in
// chunk order and by the halving tree — the operations the serial entry
// performs — so every bit equals the one-thread call
// (docs/architecture.md, "Threads").
#pragma once

#include "launch/row_launch.h"

namespace lanejit::launch {

// Runs the call by column chunks on up to `threads` threads and returns
// true, or returns false (nothing run) when a split would not help (no row
// longer than a chunk), when there is no column-split entry (asked of
// `part` only past the other checks: the first such call compiles it) or
// when it is not safe (an output overlaps an input or
// another output: the split changes the order of columns' reads and
// writes, which the alias proofs and guards assume).
bool launchColumns(const PartEntrySource &part, const LaunchArgs &args, int64_t workspace_floats, int threads,
                   const lower::RowCost &cost);

// Tests: split by columns whenever the call has a column-split entry and
// more than one thread, even rows of one chunk (so short shapes exercise
// the part entry too).
bool forcedColumnSplit();
void setForcedColumnSplit(bool on);

} // namespace lanejit::launch
