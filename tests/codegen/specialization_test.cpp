// Full-packet specialization, checked on the generated code: with it on,
// full packets use plain vector loads/stores and only the tail is masked;
// with it off, every packet is masked.
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

// Code for a named CPU (with AVX-512, which 16-lane masks become), not the
// host's: what LLVM makes of the IR must not depend on the test machine.
CompileOptions pinned() {
  CompileOptions o;
  o.lanes = 16;
  o.target_cpu = "x86-64-v4";
  return o;
}

Kernel compileRope(bool spec) {
  CompileOptions o = pinned();
  o.specialize_full_packets = spec;
  return compile(library::rope(), o);
}

TEST(Specialization, RopeFullPacketsAreUnmasked) {
  Kernel k = compileRope(true);
  EXPECT_EQ(k.report().specialized_bodies, 1);
  EXPECT_EQ(k.report().masked_bodies, 1);
  std::string ir = k.dump("llvm-unoptimized");
  // The tail reads x[:h], x[h:], cos, sin masked and writes two halves masked.
  EXPECT_EQ(test::countOccurrences(ir, "call <16 x float> @llvm.masked.load"), 4u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "call void @llvm.masked.store"), 2u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "load <16 x float>, ptr"), 4u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "store <16 x float>"), 2u) << ir;
}

TEST(Specialization, OffMasksEveryPacket) {
  Kernel k = compileRope(false);
  EXPECT_EQ(k.report().specialized_bodies, 0);
  EXPECT_EQ(k.report().masked_bodies, 2);
  std::string ir = k.dump("llvm-unoptimized");
  EXPECT_EQ(test::countOccurrences(ir, "call <16 x float> @llvm.masked.load"), 8u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "load <16 x float>, ptr"), 0u) << ir;
}

TEST(Specialization, OptimisedDenseLoopHasNoMaskedMemoryOps) {
  // After LLVM's pipeline the masked operations that remain are the tail's.
  std::string on = compileRope(true).dump("llvm");
  EXPECT_EQ(test::countOccurrences(on, "call <16 x float> @llvm.masked.load"), 4u) << on;
  EXPECT_TRUE(inspect::inspectKernel(compileRope(true)).functions.at(0).calls.empty())
      << "no calls in the kernel: math is inline";
}

TEST(Specialization, ReductionsUseIndependentAccumulators) {
  Kernel k = compile(library::layerNorm(), pinned());
  EXPECT_EQ(k.report().mapping.accumulators, 4);
  EXPECT_EQ(k.report().traversals.size(), 3u);
  EXPECT_EQ(k.report().reductions(), 2);
}

TEST(Specialization, MathIsInlineWithoutCalls) {
  // The only calls a kernel may make are to the C library's memory routines
  // (LLVM may turn masked softmax's fill of invalid columns into memset),
  // on the target of this run (ctest's avx2: pass too) and a pinned one.
  for (const CompileOptions &o : {test::targetOptions(), pinned()})
    for (const char *name : {"swiglu", "gelu_residual", "masked_softmax"}) {
      inspect::ObjectReport r = inspect::inspectKernel(compile(library::byName(name), o));
      for (const inspect::FunctionReport &f : r.functions)
        for (const inspect::CallSite &c : f.calls)
          EXPECT_TRUE(c.target == "memset" || c.target == "memcpy" || c.target == "memmove")
              << name << " calls " << c.target << ":\n"
              << inspect::toText(r);
      EXPECT_TRUE(inspect::disallowedImports(r).empty()) << name << ":\n" << inspect::toText(r);
    }
}

TEST(Specialization, MaskedSoftmaxFillsWithVectorStoresNotMemset) {
  // fill-stores (on by default): the zeros past each row's last valid
  // column are vector stores, so no call remains in the row loop (LLVM's
  // loop-idiom pass would make the fill loop a memset call per row).
  for (const CompileOptions &o : {test::targetOptions(), pinned()}) {
    inspect::ObjectReport r = inspect::inspectKernel(compile(library::maskedSoftmax(), o));
    for (const inspect::FunctionReport &f : r.functions)
      EXPECT_TRUE(f.calls.empty()) << inspect::toText(r);
  }
}

} // namespace
} // namespace lanejit
