// eliminateSlices: pushes every column slice down to the leaves.
//
// Elementwise operations commute with slicing, so slice(f(a, b), s) becomes
// f(slice(a, s), slice(b, s)); at a load or column index the slice folds
// into its begin; row-uniform operands are unaffected. Afterwards no Slice
// node remains, so codegen addresses every load directly (RoPE's
// x[:, h:C] becomes one unaligned vector load at column h + j).
// Runs first; needs nothing before it.
#pragma once

#include <lanejit/ir.h>

namespace lanejit::passes {
Program eliminateSlices(const Program &program);
}
