// The pipeline: every lowering pass has a switch, every pass leaves a
// record, a switched-off pass does not run, and planBeforePass stops where
// the pipeline would hand the plan to that pass.
#include "driver/pipeline.h"

#include <lanejit/error.h>
#include <lanejit/library.h>

#include <gtest/gtest.h>

namespace lanejit {
namespace {

TEST(Pipeline, EveryLoweringPassHasASwitchAndARecord) {
  std::vector<passes::PassRecord> records;
  CompileOptions o;
  o.fuse_pointwise = false;
  passes::runPipeline(library::rope(), o, 8, &records);
  size_t passCount = 0;
  for (const passes::PassInfo &info : passes::passList()) {
    ++passCount;
    if (info.stage == "lower") {
      EXPECT_FALSE(info.option.empty()) << info.name;
    }
  }
  ASSERT_EQ(records.size(), passCount);
  CompileOptions defaults;
  for (const passes::PassRecord &r : records)
    EXPECT_EQ(r.ran,
              r.name != "fuse-pointwise" &&
                  (r.name != "branchless-tail" || defaults.branchless_tail) &&
                  (r.name != "fill-stores" || defaults.fill_stores) &&
                  (r.name != "materialize-or-recompute" || defaults.materialize_or_recompute) &&
                  (r.name != "stream-stores" || defaults.stream_stores))
        << r.name;
}

TEST(Pipeline, PlanBeforeAPassIsThePipelinesPlanUpToIt) {
  // RoPE: fuse-outputs joins the two halves, so before it there are two
  // traversals and after the whole pipeline one.
  lower::KernelPlan before = passes::planBeforePass(library::rope(), "fuse-outputs", {}, 16);
  EXPECT_EQ(before.traversals.size(), 2u);
  EXPECT_EQ(passes::runPipeline(library::rope(), {}, 16).traversals.size(), 1u);
  EXPECT_TRUE(passes::runLoweringPass("fuse-outputs", before, {}).changed);
  EXPECT_EQ(before.traversals.size(), 1u);
}

TEST(Pipeline, AnyPassIsTurnedOffByName) {
  // By name, a lowering pass is off exactly as by its switch.
  CompileOptions byName, bySwitch;
  byName.disabled_passes = {"fuse-outputs", "cse"};
  bySwitch.fuse_outputs = false;
  bySwitch.disabled_passes = {"cse"};
  std::vector<passes::PassRecord> records;
  lower::KernelPlan plan = passes::runPipeline(library::rope(), byName, 16, &records);
  EXPECT_EQ(lower::describePlan(plan),
            lower::describePlan(passes::runPipeline(library::rope(), bySwitch, 16)));
  CompileOptions defaults;
  for (const passes::PassRecord &r : records)
    EXPECT_EQ(r.ran,
              r.name != "fuse-outputs" && r.name != "cse" &&
                  (r.name != "branchless-tail" || defaults.branchless_tail) &&
                  (r.name != "fill-stores" || defaults.fill_stores) &&
                  (r.name != "materialize-or-recompute" || defaults.materialize_or_recompute) &&
                  (r.name != "stream-stores" || defaults.stream_stores))
        << r.name;
}

TEST(Pipeline, AMisspeltPassNameIsAnErrorNamingThePasses) {
  CompileOptions o;
  o.disabled_passes = {"fuse-output"};
  try {
    passes::runPipeline(library::rope(), o, 16);
    FAIL() << "no error for an unknown pass";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("no pass 'fuse-output'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fuse-outputs"), std::string::npos) << e.what();
  }
}

TEST(Pipeline, UnknownLoweringPassIsAnError) {
  EXPECT_THROW(passes::planBeforePass(library::rope(), "fuse-everything", {}, 16), Error);
}

} // namespace
} // namespace lanejit
