// Before -> lowering pass -> Expected plan. Each test starts from the
// unfused plan (lower::initialPlan) of a small program and runs one pass.
#include "lower/lowering_passes.h"
#include "passes/eliminate_common_subexpressions.h"
#include "passes/eliminate_slices.h"
#include "passes/pipeline.h"

#include <lanejit/dsl.h>
#include <lanejit/library.h>

#include "support/testing.h"

#include <gtest/gtest.h>

namespace lanejit {
namespace {

using lower::AliasHandling;
using lower::KernelPlan;

// The IR passes (slices into loads, CSE), then the unfused plan.
KernelPlan unfused(const Program &p, int lanes = 16) {
  CompileOptions o;
  return lower::initialPlan(passes::eliminateCommonSubexpressions(passes::eliminateSlices(p)), o,
                            lanes);
}

int writesIn(const KernelPlan &plan) {
  int n = 0;
  for (const lower::Traversal &t : plan.traversals)
    n += static_cast<int>(t.writes.size());
  return n;
}

TEST(InitialPlan, MaterializesEveryElementwiseResult) {
  // SwiGLU: neg, exp, +1, div, mul = 5 elementwise values, each in its own
  // traversal, then the write's traversal.
  KernelPlan plan = unfused(library::swiglu());
  EXPECT_EQ(plan.materialized.size(), 5u);
  EXPECT_EQ(plan.traversals.size(), 6u);
  for (const lower::Traversal &t : plan.traversals)
    EXPECT_EQ(t.full, lower::PacketKind::Masked);
  EXPECT_EQ(plan.traversals.back().writes.size(), 1u);
}

TEST(FusePointwise, LeavesOnlyReductionOperandsMaterialized) {
  KernelPlan swiglu = unfused(library::swiglu());
  EXPECT_TRUE(lower::fusePointwise(swiglu, {}).changed);
  EXPECT_TRUE(swiglu.materialized.empty());
  EXPECT_EQ(swiglu.traversals.size(), 1u);

  // LayerNorm: x*x-like operands of the variance reduction stay for
  // fuseReductions; everything else is fused.
  KernelPlan ln = unfused(library::layerNorm());
  lower::fusePointwise(ln, {});
  ASSERT_EQ(ln.materialized.size(), 1u);
  EXPECT_EQ(ln.materialized[0]->kind, NodeKind::Binary); // (x - mean)^2
}

TEST(FuseReductions, ComputesOperandsInsideTheReduction) {
  KernelPlan ln = unfused(library::layerNorm());
  lower::fusePointwise(ln, {});
  lower::orderTraversals(ln);
  EXPECT_TRUE(lower::fuseReductions(ln, {}).changed);
  EXPECT_TRUE(ln.materialized.empty());
  // mean pass, variance pass, write pass.
  EXPECT_EQ(ln.traversals.size(), 3u);
}

TEST(FuseOutputs, JoinsRopesTwoHalvesIntoOneTraversal) {
  KernelPlan rope = unfused(library::rope());
  lower::fusePointwise(rope, {});
  ASSERT_EQ(rope.traversals.size(), 2u);
  EXPECT_TRUE(lower::fuseOutputs(rope, {}).changed);
  ASSERT_EQ(rope.traversals.size(), 1u);
  EXPECT_EQ(rope.traversals[0].writes.size(), 2u);
  EXPECT_EQ(writesIn(rope), 2);
}

TEST(FuseOutputs, KeepsDifferentDepthsApart) {
  // Softmax's max, sum and write depend on each other: nothing to join.
  KernelPlan sm = unfused(library::maskedSoftmax());
  lower::fusePointwise(sm, {});
  lower::fuseReductions(sm, {});
  size_t before = sm.traversals.size();
  EXPECT_FALSE(lower::fuseOutputs(sm, {}).changed);
  EXPECT_EQ(sm.traversals.size(), before);
}

TEST(SpecializeFullPackets, MarksEveryTraversalDense) {
  KernelPlan plan = unfused(library::rmsNorm());
  lower::specializeFullPackets(plan, {});
  for (const lower::Traversal &t : plan.traversals)
    EXPECT_EQ(t.full, lower::PacketKind::Dense);
}

AliasHandling handlingOf(const KernelPlan &plan, const std::string &input) {
  for (const lower::AliasPair &p : plan.alias)
    if (plan.program.inputs[p.input].name == input)
      return p.handling;
  ADD_FAILURE() << "no alias pair for " << input;
  return AliasHandling::StagedByCaller;
}

TEST(ProveInPlace, FusedRopeIsSafeInPlace) {
  KernelPlan rope = unfused(library::rope());
  lower::fusePointwise(rope, {});
  lower::fuseOutputs(rope, {});
  lower::proveInPlace(rope, {});
  EXPECT_EQ(handlingOf(rope, "x"), AliasHandling::ProvedInPlace);
  EXPECT_EQ(handlingOf(rope, "cos"), AliasHandling::ProvedInPlace);
  EXPECT_TRUE(rope.guardedInputs().empty());
}

TEST(ProveInPlace, UnjoinedRopeNeedsAGuard) {
  // The first half of y is written by traversal 0 before traversal 1 reads
  // x's first half again: the brief's in-place RoPE hazard.
  KernelPlan rope = unfused(library::rope());
  lower::fusePointwise(rope, {});
  lower::proveInPlace(rope, {});
  EXPECT_EQ(handlingOf(rope, "x"), AliasHandling::GuardedRowStaging);
  EXPECT_EQ(rope.guardedInputs().size(), 3u);
  for (const lower::AliasPair &p : rope.alias)
    EXPECT_NE(p.reason.find("traversal 0 may overwrite"), std::string::npos) << p.reason;
}

TEST(ProveInPlace, WriteAheadOfReadIsGuardedWriteBehindIsProved) {
  KernelPlan right = unfused(test::writeAheadProgram());
  lower::fusePointwise(right, {});
  lower::fuseOutputs(right, {});
  lower::proveInPlace(right, {});
  EXPECT_EQ(handlingOf(right, "x"), AliasHandling::GuardedRowStaging);

  KernelPlan left = unfused(test::writeBehindProgram());
  lower::fusePointwise(left, {});
  lower::fuseOutputs(left, {});
  lower::proveInPlace(left, {});
  EXPECT_EQ(handlingOf(left, "x"), AliasHandling::ProvedInPlace);
}

TEST(ProveInPlace, ColumnVectorsAreLeftToTheCaller) {
  KernelPlan ln = unfused(library::layerNorm());
  lower::proveInPlace(ln, {});
  EXPECT_EQ(handlingOf(ln, "gamma"), AliasHandling::StagedByCaller);
  EXPECT_EQ(handlingOf(ln, "x"), AliasHandling::ProvedInPlace); // reads all done by then
}

TEST(HoistGuards, MarksGuardsLaunchUniform) {
  KernelPlan rope = unfused(library::rope());
  EXPECT_FALSE(rope.hoist_guards);
  lower::hoistGuards(rope, {});
  EXPECT_TRUE(rope.hoist_guards);
}

TEST(ChooseInlining, FollowsTheForcedPolicyOrTheCostRule) {
  CompileOptions never, always, rule;
  never.inline_packet_bodies = CompileOptions::Inline::Never;
  always.inline_packet_bodies = CompileOptions::Inline::Always;
  KernelPlan a = unfused(library::geluResidual());
  lower::chooseInlining(a, never);
  for (const lower::Traversal &t : a.traversals)
    EXPECT_FALSE(t.inline_bodies);
  lower::chooseInlining(a, always);
  for (const lower::Traversal &t : a.traversals)
    EXPECT_TRUE(t.inline_bodies);
  // Small bodies with one copy each: the rule inlines them.
  KernelPlan b = unfused(library::swiglu());
  lower::fusePointwise(b, {});
  lower::chooseInlining(b, rule);
  EXPECT_TRUE(b.traversals[0].inline_bodies);
}

TEST(Pipeline, EveryLoweringPassHasASwitchAndARecord) {
  std::vector<passes::PassRecord> records;
  CompileOptions o;
  o.fuse_pointwise = false;
  passes::runPipeline(library::rope(), o, 8, &records);
  for (const passes::PassInfo &info : passes::passList())
    if (info.stage == "lower") {
      EXPECT_FALSE(info.option.empty()) << info.name;
    }
  bool sawFusion = false;
  for (const passes::PassRecord &r : records)
    if (r.name == "fuse-pointwise") {
      sawFusion = true;
      EXPECT_FALSE(r.ran);
    }
  EXPECT_TRUE(sawFusion);
}

} // namespace
} // namespace lanejit
