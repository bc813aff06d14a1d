// Streaming stores (lower/stream_stores.cpp, codegen/emit_streaming.cpp):
// write-only traversals of large calls store full packets non-temporally
// after an aligning first packet. Checked here at every size (threshold 0):
// the same bits as normal stores at every W, tail, row padding and buffer
// alignment, and the code holds non-temporal stores only where it should.
// The alias tests run the same setting on in-place and shifted buffers
// (tests/support/aliased_call.h).
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

CompileOptions streaming(int lanes, bool on) {
  CompileOptions o = test::targetOptions();
  o.lanes = lanes;
  o.stream_stores = on;
  o.stream_min_kib = 0; // every call streams
  return o;
}

class StreamingStores : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamingStores, SameBitsAsNormalStoresAtEveryTailPaddingAndWidth) {
  Program p = library::byName(GetParam());
  int64_t multiple = GetParam() == "rope" ? 2 : 1;
  for (int lanes : {4, 8, 16}) {
    Kernel on = compile(p, streaming(lanes, true)), off = compile(p, streaming(lanes, false));
    EXPECT_TRUE(
        test::sameBitsOverTails(on, off, p, lanes, multiple, {0, 1, 3}, {5, 1000 * multiple + 6}))
        << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(AllOperators, StreamingStores,
                         ::testing::Values("rope", "layernorm", "swiglu", "rmsnorm",
                                           "gelu_residual", "masked_softmax"),
                         [](const auto &info) { return info.param; });

// Code for named CPUs, not the host's (these kernels are only inspected).
std::string asmOf(const Program &p, const char *cpu, int lanes, bool on) {
  CompileOptions o;
  o.target_cpu = cpu;
  o.lanes = lanes;
  o.stream_stores = on;
  return compile(p, o).dump("asm");
}

TEST(StreamingStoresCode, WriteOnlyTraversalsStoreNonTemporallyAndFence) {
  for (auto [cpu, lanes] : {std::pair{"x86-64-v3", 8}, std::pair{"x86-64-v4", 16}}) {
    SCOPED_TRACE(cpu);
    // LayerNorm: only the normalising traversal writes, so only its full
    // packets stream; the reductions' loads are untouched.
    std::string on = asmOf(library::layerNorm(), cpu, lanes, true);
    EXPECT_GE(test::countOccurrences(on, "vmovntps"), 1u) << on;
    EXPECT_EQ(test::countOccurrences(on, "sfence"), 1u) << on;
    std::string off = asmOf(library::layerNorm(), cpu, lanes, false);
    EXPECT_EQ(test::countOccurrences(off, "vmovntps"), 0u);
    EXPECT_EQ(test::countOccurrences(off, "sfence"), 0u);
  }
}

TEST(StreamingStoresCode, PlanSaysWhichTraversalsStream) {
  CompileOptions o = test::targetOptions();
  o.stream_stores = true;
  o.stream_min_kib = 64;
  std::string plan = compile(library::maskedSoftmax(), o).dump("plan");
  // Softmax's last traversal writes past a column bound (fills): not streamed.
  EXPECT_EQ(test::countOccurrences(plan, "non-temporal"), 0u) << plan;
  plan = compile(library::rmsNorm(), o).dump("plan");
  EXPECT_EQ(test::countOccurrences(plan, "non-temporal stores from 65536 bytes per output"), 1u)
      << plan;
}

} // namespace
} // namespace lanejit
