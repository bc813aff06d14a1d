// Prefetch of the next row (lower/prefetch_next_row.cpp,
// codegen/emit_traversal.cpp): checked at every call size (threshold 0), so
// the prefetching code runs on long rows: the same bits as without at every
// W, tail, row padding and row count (the last row's prefetches point past
// the buffers, which a prefetch may), and the code prefetches only where it
// should.
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

CompileOptions prefetching(int lanes, bool on) {
  CompileOptions o = test::targetOptions();
  o.lanes = lanes;
  o.prefetch_next_row = on;
  o.prefetch_min_kib = 0; // every call prefetches
  return o;
}

class PrefetchNextRow : public ::testing::TestWithParam<std::string> {};

TEST_P(PrefetchNextRow, SameBitsAsWithoutAtEveryTailPaddingAndWidth) {
  Program p = library::byName(GetParam());
  int64_t multiple = GetParam() == "rope" ? 2 : 1;
  for (int lanes : {4, 8, 16}) {
    Kernel on = compile(p, prefetching(lanes, true)), off = compile(p, prefetching(lanes, false));
    // The long rows reach every prefetching entry (RMSNorm's from 4096
    // columns).
    EXPECT_TRUE(
        test::sameBitsOverTails(on, off, p, lanes, multiple, {0, 3}, {5, 4100 * multiple + 6}))
        << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(AllOperators, PrefetchNextRow,
                         ::testing::Values("rope", "layernorm", "swiglu", "rmsnorm",
                                           "gelu_residual", "masked_softmax"),
                         [](const auto &info) { return info.param; });

// Code for a named CPU, not the host's (only inspected): the generic entry,
// or with `cols` the entry compiled for that C.
std::string asmOf(const Program &p, bool on, int64_t cols = 0) {
  CompileOptions o;
  o.target_cpu = "x86-64-v4";
  o.prefetch_next_row = on;
  Kernel k = compile(p, o);
  return cols ? k.dump("asm", cols) : k.dump("asm");
}

TEST(PrefetchNextRowCode, OnlyRowsOfSeveralTraversalsPrefetch) {
  // LayerNorm's variance traversal: one prefetch per 64-byte line of a
  // group of K = 4 packets of 16 lanes, behind the size gate.
  std::string on = asmOf(library::layerNorm(), true);
  EXPECT_EQ(test::countOccurrences(on, "prefetcht0"), 4u) << on;
  EXPECT_EQ(test::countOccurrences(asmOf(library::layerNorm(), false), "prefetcht0"), 0u);
  // SwiGLU is one traversal: nothing to prefetch ahead of.
  EXPECT_EQ(test::countOccurrences(asmOf(library::swiglu(), true), "prefetcht0"), 0u);
}

TEST(PrefetchNextRowCode, EntriesForShortRowsDoNotPrefetch) {
  // Entries compiled for C know their rows' length: LayerNorm prefetches
  // from 512 columns (2 KiB), RMSNorm, whose prefetching traversal is the
  // row's first, from 4096 (16 KiB).
  EXPECT_EQ(test::countOccurrences(asmOf(library::layerNorm(), true, 511), "prefetcht0"), 0u);
  EXPECT_EQ(test::countOccurrences(asmOf(library::layerNorm(), true, 512), "prefetcht0"), 4u);
  EXPECT_EQ(test::countOccurrences(asmOf(library::rmsNorm(), true, 1024), "prefetcht0"), 0u);
  EXPECT_EQ(test::countOccurrences(asmOf(library::rmsNorm(), true), "prefetcht0"), 4u);
}

} // namespace
} // namespace lanejit
