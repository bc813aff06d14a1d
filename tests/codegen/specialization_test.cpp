// Full-packet specialization, checked on the generated code: with it on,
// full packets use plain vector loads/stores and only the tail is masked;
// with it off, every packet is masked.
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

Kernel compileRope(bool spec) {
  CompileOptions o;
  o.lanes = 16;
  o.specialize_full_packets = spec;
  return compile(library::rope(), o);
}

TEST(Specialization, RopeFullPacketsAreUnmasked) {
  Kernel k = compileRope(true);
  EXPECT_EQ(k.stats().dense_bodies, 1);
  EXPECT_EQ(k.stats().masked_bodies, 1);
  std::string ir = k.dump("llvm-unoptimized");
  // The tail reads x[:h], x[h:], cos, sin masked and writes two halves masked.
  EXPECT_EQ(test::countOccurrences(ir, "call <16 x float> @llvm.masked.load"), 4u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "call void @llvm.masked.store"), 2u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "load <16 x float>, ptr"), 4u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "store <16 x float>"), 2u) << ir;
}

TEST(Specialization, OffMasksEveryPacket) {
  Kernel k = compileRope(false);
  EXPECT_EQ(k.stats().dense_bodies, 0);
  EXPECT_EQ(k.stats().masked_bodies, 2);
  std::string ir = k.dump("llvm-unoptimized");
  EXPECT_EQ(test::countOccurrences(ir, "call <16 x float> @llvm.masked.load"), 8u) << ir;
  EXPECT_EQ(test::countOccurrences(ir, "load <16 x float>, ptr"), 0u) << ir;
}

TEST(Specialization, OptimisedDenseLoopHasNoMaskedMemoryOps) {
  // After LLVM's pipeline the masked operations that remain are the tail's.
  std::string on = compileRope(true).dump("llvm");
  EXPECT_EQ(test::countOccurrences(on, "call <16 x float> @llvm.masked.load"), 4u) << on;
  std::string asmText = compileRope(true).dump("asm");
  EXPECT_EQ(test::countOccurrences(asmText, "call"), 0u) << "no calls in the kernel: math is inline";
}

TEST(Specialization, ReductionsUseIndependentAccumulators) {
  CompileOptions o;
  o.lanes = 16;
  Kernel k = compile(library::layerNorm(), o);
  EXPECT_EQ(k.stats().accumulators, 4);
  EXPECT_EQ(k.stats().traversals, 3);
  EXPECT_EQ(k.stats().reductions, 2);
}

TEST(Specialization, MathIsInlineWithoutCalls) {
  // The only call a kernel may make is to the C library's memset (LLVM turns
  // masked softmax's fill of invalid columns into one).
  for (const char *name : {"swiglu", "gelu_residual", "masked_softmax"}) {
    std::string asmText = compile(library::byName(name)).dump("asm");
    EXPECT_EQ(test::countOccurrences(asmText, "\tcall"),
              test::countOccurrences(asmText, "\tcallq\tmemset"))
        << name << ":\n" << asmText;
  }
}

} // namespace
} // namespace lanejit
