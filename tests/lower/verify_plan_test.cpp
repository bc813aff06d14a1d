// The plan verifier: sound plans pass after every lowering pass, and each
// broken invariant is rejected with a message naming it. Each rejection
// test takes a plan the pipeline produced (Before), breaks one thing, and
// expects the verifier's line for it (Expected).
#include "lower/lowering_passes.h"
#include "lower/verify_plan.h"
#include "driver/pipeline.h"

#include <lanejit/error.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <gtest/gtest.h>

namespace lanejit {
namespace {

using lower::AliasHandling;
using lower::KernelPlan;

KernelPlan lowered(const Program &program, CompileOptions options = {}, int lanes = 16) {
  return passes::runPipeline(program, options, lanes);
}

// The verifier's problems joined, so a test can look for one line.
std::string problems(const KernelPlan &plan) {
  std::string all;
  for (const std::string &p : lower::verifyPlan(plan))
    all += p + "\n";
  return all;
}

// The problems of `plan` with its first and last traversals swapped.
std::string problemsAfterSwappingFirstAndLast(KernelPlan plan) {
  EXPECT_GE(plan.traversals.size(), 2u);
  if (plan.traversals.size() < 2)
    return "";
  std::swap(plan.traversals.front(), plan.traversals.back());
  return problems(plan);
}

// SwiGLU with pointwise fusion off: every elementwise value in the workspace.
KernelPlan unfusedSwiglu() {
  CompileOptions o;
  o.fuse_pointwise = false;
  return lowered(library::swiglu(), o);
}

TEST(VerifyPlan, AcceptsEveryLibraryPlanUnderEverySwitchSetting) {
  // The pipeline verifies after every pass, so lowering without an
  // exception is the check; a few settings that reshape the plan most.
  for (const library::Entry &entry : library::all())
    for (int lanes : {4, 8, 16})
      for (bool fuse : {true, false}) {
        CompileOptions o;
        o.fuse_pointwise = o.fuse_reductions = o.fuse_outputs = fuse;
        o.prove_in_place = !fuse;
        KernelPlan plan;
        ASSERT_NO_THROW(plan = lowered(entry.make(), o, lanes)) << entry.name;
        EXPECT_EQ(problems(plan), "") << entry.name << " W=" << lanes;
      }
}

TEST(VerifyPlan, RejectsAMissingWrite) {
  KernelPlan plan = lowered(library::swiglu());
  plan.traversals[0].writes.clear();
  EXPECT_NE(problems(plan).find("write 0 (to y) is done by 0 traversals, not 1"), std::string::npos)
      << problems(plan);
}

TEST(VerifyPlan, RejectsAReductionComputedTwice) {
  KernelPlan plan = lowered(library::rmsNorm());
  ASSERT_FALSE(plan.traversals[0].reductions.empty());
  plan.traversals.back().reductions.push_back(plan.traversals[0].reductions[0]);
  EXPECT_NE(problems(plan).find("is reduced by two traversals"), std::string::npos)
      << problems(plan);
}

TEST(VerifyPlan, RejectsReadingAReductionBeforeItIsComputed) {
  // LayerNorm: the mean's traversal, the variance's, then the write's.
  std::string found = problemsAfterSwappingFirstAndLast(lowered(library::layerNorm()));
  EXPECT_NE(found.find("runs after"), std::string::npos) << found;
  EXPECT_NE(found.find("before traversal"), std::string::npos) << found;
}

TEST(VerifyPlan, RejectsReadingAWorkspaceValueBeforeItIsMaterialized) {
  // Same depth, so only the workspace order is wrong.
  std::string found = problemsAfterSwappingFirstAndLast(unfusedSwiglu());
  EXPECT_NE(found.find("reads workspace value"), std::string::npos) << found;
  EXPECT_EQ(found.find("runs after"), std::string::npos) << found;
}

TEST(VerifyPlan, RejectsAWorkspaceSlotNobodyFills) {
  KernelPlan plan = unfusedSwiglu();
  ASSERT_FALSE(plan.traversals.front().materializations.empty());
  plan.traversals.front().materializations.clear();
  EXPECT_NE(problems(plan).find("has a workspace slot no traversal fills"), std::string::npos)
      << problems(plan);
}

TEST(VerifyPlan, RejectsAnAccumulatorCountThatChangesTheAssociation) {
  KernelPlan plan = lowered(library::rmsNorm(), {}, 8);
  plan.accumulators = 4; // 8 x 4 = 32 virtual lanes, not 64
  EXPECT_NE(problems(plan).find("W x accumulators = 32"), std::string::npos) << problems(plan);
}

TEST(VerifyPlan, RejectsAnInPlaceClaimTheOrderDoesNotSupport) {
  // RoPE with output fusion off: the first traversal overwrites y[:, :h]
  // before the second reads x[:, :h], so x / y must stay guarded.
  CompileOptions o;
  o.fuse_outputs = false;
  KernelPlan plan = lowered(library::rope(), o);
  bool forced = false;
  for (lower::AliasPair &pair : plan.alias)
    if (plan.program.inputs[pair.input].name == "x" &&
        pair.handling == AliasHandling::GuardedRowStaging) {
      pair.handling = AliasHandling::ProvedInPlace;
      forced = true;
    }
  ASSERT_TRUE(forced);
  EXPECT_NE(problems(plan).find("called proved in place, but y["), std::string::npos)
      << problems(plan);
}

TEST(VerifyPlan, RejectsAColumnVectorTreatedAsExactlyAliased) {
  KernelPlan plan = lowered(library::layerNorm());
  bool changed = false;
  for (lower::AliasPair &pair : plan.alias)
    if (plan.program.inputs[pair.input].kind != ParamKind::RowTensor) {
      pair.handling = AliasHandling::GuardedRowStaging;
      changed = true;
    }
  ASSERT_TRUE(changed);
  EXPECT_NE(problems(plan).find(
                "not a row tensor of the output's type, yet handled as exactly aliased"),
            std::string::npos)
      << problems(plan);
}

TEST(VerifyPlan, RejectsAMissingAliasDecision) {
  KernelPlan plan = lowered(library::swiglu());
  plan.alias.pop_back();
  EXPECT_NE(problems(plan).find("has 0 decisions, not 1"), std::string::npos) << problems(plan);
}

TEST(VerifyPlan, RejectsAColumnBoundWithoutAFillPerWrite) {
  KernelPlan plan = lowered(library::maskedSoftmax());
  lower::Traversal *bounded = nullptr;
  for (lower::Traversal &t : plan.traversals)
    if (t.bound && !t.writes.empty())
      bounded = &t;
  ASSERT_NE(bounded, nullptr) << "masked softmax's write traversal should be bounded";
  bounded->bound->fills.clear();
  EXPECT_NE(problems(plan).find("fills for"), std::string::npos) << problems(plan);
}

TEST(VerifyPlan, ThrowsNamingThePassThatRanLast) {
  KernelPlan plan = lowered(library::swiglu());
  plan.traversals.clear();
  try {
    lower::verifyPlanOrThrow(plan, "fuse-outputs");
    FAIL() << "an empty plan for a program with a write was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.kind(), Error::Kind::Compile);
    EXPECT_NE(std::string(e.what()).find("after fuse-outputs:"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace lanejit
