// eliminateCommonSubexpressions: merges structurally equal nodes.
//
// Captured programs often build the same value twice (x*x in two places,
// the same load from two slices); after merging, codegen computes each value
// once per packet and each reduction once per row. Runs after
// eliminateSlices, which can make distinct slices into equal loads.
#pragma once

#include <lanejit/ir.h>

namespace lanejit::passes {
Program eliminateCommonSubexpressions(const Program &program);
}
