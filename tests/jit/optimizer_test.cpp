// The lean pipeline's first two InstCombines sweep once instead of to a
// fixed point (src/jit/optimizer.cpp): a compile-time cut that must leave the
// code alone. Pinned here against the same pipeline with every InstCombine
// at LLVM 16's default, given as LANEJIT_LLVM_PASSES.
#include <lanejit/kernel.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>

namespace lanejit {
namespace {

// src/jit/optimizer.cpp's leanPipeline() in opt's syntax, every InstCombine
// sweeping until nothing changes.
const char *kFixedPointPipeline =
    "function(sroa<modify-cfg>,early-cse<memssa>,instcombine,simplifycfg,"
    "correlated-propagation,loop(loop-rotate),loop-mssa(licm),instcombine,loop(indvars),gvn,"
    "jump-threading,correlated-propagation,instcombine)";

// Sets LANEJIT_LLVM_PASSES for its lifetime (dumps read it per call).
class PipelineOverride {
public:
  explicit PipelineOverride(const char *text) { ::setenv("LANEJIT_LLVM_PASSES", text, 1); }
  ~PipelineOverride() { ::unsetenv("LANEJIT_LLVM_PASSES"); }
};

// The generic entry, the entries specialised for C = 65 and 66 (RoPE's
// two-trip packet loop, which needs the last InstCombine's second sweep)
// and a rows-across-lanes entry; symbols renamed (each dump numbers its
// entry afresh).
std::string code(const Kernel &kernel) {
  std::string text = kernel.dump("asm") + kernel.dump("asm", 65) + kernel.dump("asm", 66) +
                     kernel.dumpRowsAcrossLanes("asm", 16);
  return std::regex_replace(text, std::regex(R"(lanejit_\w+)"), "ENTRY");
}

TEST(LeanPipeline, OneSweepInstCombinesGiveTheFixedPointsCode) {
  ASSERT_EQ(std::getenv("LANEJIT_LLVM_PASSES"), nullptr);
  for (int lanes : {0, 8}) {
    for (const library::Entry &entry : library::all()) {
      SCOPED_TRACE(entry.name + " W=" + std::to_string(lanes));
      CompileOptions options;
      options.lanes = lanes;
      Kernel kernel = compile(entry.make(), options);
      std::string lean = code(kernel);
      PipelineOverride fixedPoint(kFixedPointPipeline);
      EXPECT_EQ(lean, code(kernel));
    }
  }
}

} // namespace
} // namespace lanejit
