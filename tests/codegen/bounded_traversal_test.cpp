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

// in_row_tails: on AArch64 a bounded traversal's tail packet and its
// fills' tail each get a path without lane masks for when they lie inside
// the row (the bits are the cross test's to prove, on and off).
std::string maskedSoftmaxIR(bool aarch64, bool inRowTails) {
  CompileOptions o;
  o.target_triple = aarch64 ? "aarch64-linux-gnu" : "";
  o.target_cpu = aarch64 ? "apple-m1" : "x86-64-v4";
  o.lanes = 8;
  o.in_row_tails = inRowTails;
  return compile(library::maskedSoftmax(), o).dump("llvm-unoptimized", 65);
}

TEST(BoundedTraversal, AArch64TailsInsideTheRowHaveAPathWithoutLaneMasks) {
  // Before: the tails are lane-masked loads and stores only.
  std::string off = maskedSoftmaxIR(true, false);
  EXPECT_EQ(test::countOccurrences(off, "tail.in_row"), 0u);
  // After: the three bounded traversals' tails and the output's fill tail
  // branch on lying inside the row.
  std::string on = maskedSoftmaxIR(true, true);
  EXPECT_GE(test::countOccurrences(on, "\ntail.in_row.then"), 3u);
  EXPECT_GE(test::countOccurrences(on, "\nfill.tail.in_row.then"), 1u);
  EXPECT_LT(test::countOccurrences(on, "@llvm.masked.load"),
            2 * test::countOccurrences(on, "\ntail.in_row.then"));
  // x86 has mask registers: its tails stay lane-masked.
  EXPECT_EQ(test::countOccurrences(maskedSoftmaxIR(false, true), "tail.in_row"), 0u);
}

} // namespace
} // namespace lanejit
