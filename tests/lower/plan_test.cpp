// Before -> planKernel -> Expected traversals.
#include <lanejit/library.h>

#include "lower/plan.h"
#include "passes/pipeline.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

lower::KernelPlan plan(const Program &p, bool spec = true, int lanes = 16) {
  CompileOptions o;
  o.specialize_full_packets = spec;
  return lower::planKernel(passes::runPipeline(p, o), o, lanes);
}

TEST(Plan, RopeIsOneTraversalOfHalfTheColumnsWritingBothHalves) {
  lower::KernelPlan k = plan(library::rope());
  ASSERT_EQ(k.traversals.size(), 1u);
  EXPECT_EQ(k.traversals[0].len, Dim::C() / 2);
  EXPECT_EQ(k.traversals[0].writes.size(), 2u);
  EXPECT_TRUE(k.traversals[0].reductions.empty());
}

TEST(Plan, LayerNormIsThreeTraversals) {
  lower::KernelPlan k = plan(library::layerNorm());
  ASSERT_EQ(k.traversals.size(), 3u); // mean, variance, normalise-and-store
  EXPECT_EQ(k.traversals[0].reductions.size(), 1u);
  EXPECT_EQ(k.traversals[1].reductions.size(), 1u);
  EXPECT_EQ(k.traversals[2].writes.size(), 1u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(k.traversals[i].depth, i);
}

TEST(Plan, SwigluIsOneStoreTraversal) {
  lower::KernelPlan k = plan(library::swiglu());
  ASSERT_EQ(k.traversals.size(), 1u);
  EXPECT_TRUE(k.traversals[0].reductions.empty());
}

TEST(Plan, AccumulatorsTimesLanesIsFixed) {
  for (int lanes : {4, 8, 16})
    EXPECT_EQ(plan(library::rmsNorm(), true, lanes).accumulators * lanes, lower::kReductionLanes);
}

TEST(Plan, SpecializationSwitchChoosesTheFullPacketBody) {
  for (const lower::Traversal &t : plan(library::layerNorm(), true).traversals)
    EXPECT_EQ(t.full, lower::PacketKind::Dense);
  for (const lower::Traversal &t : plan(library::layerNorm(), false).traversals)
    EXPECT_EQ(t.full, lower::PacketKind::Masked);
}

} // namespace
} // namespace lanejit
