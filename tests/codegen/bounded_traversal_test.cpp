// Bounded traversals, checked on the generated code: a traversal that
// stops at a row-uniform column bound (bound-masked-columns) visits only
// columns where its predicate holds, so codegen takes the first operand of
// every select on that predicate instead of comparing column indices per
// packet. The bits are the switch sweep's to prove; this checks the code.
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

// Vector compares of column indices against the row's limit (`c <= r mod
// C` in masked softmax), in the IR before LLVM's optimiser.
size_t columnCompares(bool bound) {
  CompileOptions o;
  o.lanes = 16;
  o.target_cpu = "x86-64-v4";
  o.bound_masked_columns = bound;
  return test::countOccurrences(compile(library::maskedSoftmax(), o).dump("llvm-unoptimized"),
                                "icmp sle <16 x i32>");
}

TEST(BoundedTraversal, SelectsOnTheBoundComparePerPacketWithoutIt) {
  // Before: every packet body of the three traversals compares.
  EXPECT_GE(columnCompares(false), 6u);
  // After: inside the bound the predicate is known to hold.
  EXPECT_EQ(columnCompares(true), 0u);
}

} // namespace
} // namespace lanejit
