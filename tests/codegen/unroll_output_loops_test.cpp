// unroll_output_loops, checked on the generated code: AArch64's generic
// entry runs a loop without reductions two packets per iteration, and one
// with the switch off, in an entry compiled for C, and on x86. The bits
// are the switch sweep's and the cross test's to prove; this checks the
// code.
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>

namespace lanejit {
namespace {

// Unmasked packet stores of f32 to a buffer (`align 4`, an element's; the
// accumulators' stack slots are packet-aligned), in the IR before LLVM's
// optimiser.
size_t packetStores(const Program &program, bool aarch64, bool unroll, int64_t cols = 0) {
  CompileOptions o;
  o.target_triple = aarch64 ? "aarch64-linux-gnu" : "";
  o.target_cpu = aarch64 ? "apple-m1" : "x86-64-v4";
  o.lanes = aarch64 ? 8 : 16;
  o.unroll_output_loops = unroll;
  Kernel kernel = compile(program, o);
  std::string ir = cols ? kernel.dump("llvm-unoptimized", cols) : kernel.dump("llvm-unoptimized");
  static const std::regex store(R"(^\s*store <\d+ x float> %\S+, ptr %\S+, align 4$)");
  std::istringstream lines(ir);
  size_t n = 0;
  for (std::string line; std::getline(lines, line);)
    n += std::regex_match(line, store);
  return n;
}

TEST(UnrollOutputLoops, TwoPacketsPerIterationInAArch64sGenericEntry) {
  // Before: RMSNorm's scaling loop stores one packet per iteration.
  EXPECT_EQ(packetStores(library::rmsNorm(), true, false), 1u);
  // After: two in the loop, and the leftover packet behind its branch.
  EXPECT_EQ(packetStores(library::rmsNorm(), true, true), 3u);
  // An elementwise program's only loop, likewise.
  EXPECT_EQ(packetStores(library::swiglu(), true, false), 1u);
  EXPECT_EQ(packetStores(library::swiglu(), true, true), 3u);
}

TEST(UnrollOutputLoops, OnePacketPerIterationElsewhere) {
  // x86 code and entries compiled for their C are not unrolled.
  EXPECT_EQ(packetStores(library::rmsNorm(), false, true), 1u);
  EXPECT_EQ(packetStores(library::rmsNorm(), true, true, 1000), 1u);
}

} // namespace
} // namespace lanejit
