// The tuner (lanejit/tune.h): every candidate gives the untuned kernel's
// bits, a recorded choice reaches a later kernel's calls, records from
// another target or build are ignored with a reason, a tiny budget still
// chooses, and shapes are parsed strictly. No timing is asserted.
#include "support/cache_home.h"
#include "support/command_line.h"
#include "support/output_bits.h"
#include "support/testing.h"

#include <lanejit/error.h>
#include <lanejit/kernel_cache.h>
#include <lanejit/library.h>
#include <lanejit/tune.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>

namespace lanejit {
namespace {

// $XDG_CACHE_HOME at a fresh folder: records and objects of this test only.
class Tuner : public ::testing::Test {
protected:
  void TearDown() override { clearKernelCache(); }
  // Small budgets: the tests check choices and bits, not speed.
  static TuneSettings quick() {
    TuneSettings s;
    s.budget_ms = 30;
    return s;
  }
  test::CacheHome cache_{"lanejit_tuner_test"};
};

test::Outputs runOn(const Kernel &k, const Program &p, TuneShape shape) {
  check::Case c = check::makeCase(p, {shape.rows, shape.cols}, check::Fill::Random, 7);
  k.bind(c.inputRefs(), c.outputRefs())();
  return test::outputsOf(c);
}

TEST(TuneShape, ParsesRowsByColumnsAndRejectsTheRest) {
  TuneShape s = TuneShape::parse("4096x64");
  EXPECT_EQ(s.rows, 4096);
  EXPECT_EQ(s.cols, 64);
  EXPECT_EQ(TuneShape::parse("1X8").str(), "1x8");
  for (const char *bad :
       {"", "64", "x8", "8x", "0x8", "8x0", "-1x8", "8x8x8", "axb", " 8x8", "1234567890123x8"}) {
    try {
      TuneShape::parse(bad);
      ADD_FAILURE() << "'" << bad << "' parsed";
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Bind);
      EXPECT_NE(std::string(e.what()).find("expected ROWSxCOLS"), std::string::npos) << e.what();
    }
  }
}

TEST_F(Tuner, EveryCandidateGivesTheUntunedBits) {
  CompileOptions o = test::targetOptions();
  for (const library::Entry &entry : library::all()) {
    Program p = entry.make();
    for (TuneShape shape : {TuneShape{33, 8}, TuneShape{17, 66}, TuneShape{9, 2}}) {
      test::Outputs untuned = runOn(compile(p, o), p, shape);
      std::vector<TuneCandidate> candidates = tuneCandidates(p, shape, o);
      ASSERT_GE(candidates.size(), 2u) << entry.name;
      for (const TuneCandidate &c : candidates)
        EXPECT_TRUE(test::sameBits(untuned, runOn(compileCandidate(p, o, c), p, shape)))
            << entry.name << " " << shape.str() << " " << c.name();
    }
  }
}

TEST_F(Tuner, TheRecordedChoiceRunsWithTheUntunedBits) {
  CompileOptions o = test::targetOptions();
  for (const char *name : {"rmsnorm", "layernorm", "masked_softmax"}) {
    Program p = library::byName(name);
    TuneShape shape{64, 8};
    TuneResult r = tune(p, shape, o, quick());
    ASSERT_FALSE(r.record_path.empty()) << r.text();
    TunedRecord record = findTuned(p, shape, o);
    ASSERT_TRUE(record.applies) << record.message;
    EXPECT_EQ(record.choice, r.measured[r.chosen].candidate);
    // A later kernel's calls with this C run the chosen configuration's
    // entry, and write the untuned kernel's bits.
    Kernel later = compile(p, o);
    EXPECT_EQ(later.nativeEntry(shape.rows, shape.cols),
              compileCandidate(p, o, record.choice).nativeEntry(shape.rows, shape.cols))
        << name << " " << record.choice.name();
    CompileOptions plain = o;
    plain.rows_across_lanes = false; // another cache key: no record applies
    EXPECT_TRUE(test::sameBits(runOn(later, p, shape), runOn(compile(p, plain), p, shape))) << name;
    // A shape in the same row class shares the record; another C does not.
    EXPECT_TRUE(findTuned(p, {40, 8}, o).applies);
    EXPECT_FALSE(findTuned(p, {64, 9}, o).found);
  }
}

TEST_F(Tuner, ATinyBudgetStillChoosesAMeasuredCandidate) {
  TuneSettings s;
  s.budget_ms = 0.001;
  TuneResult r = tune(library::rmsNorm(), {100, 16}, test::targetOptions(), s);
  ASSERT_LT(r.chosen, r.measured.size());
  EXPECT_GT(r.measured[r.chosen].samples, 0);
  EXPECT_GT(r.measured[r.chosen].median_ns, 0);
  EXPECT_NE(r.text().find("chose " + r.measured[r.chosen].candidate.name()), std::string::npos)
      << r.text();
}

TEST_F(Tuner, ARecordOfAnotherBuildOrTargetIsIgnoredWithTheReason) {
  CompileOptions o = test::targetOptions();
  Program p = library::rmsNorm();
  TuneShape shape{64, 8};
  TuneResult r = tune(p, shape, o, quick());
  ASSERT_FALSE(r.record_path.empty());
  std::string original = test::slurp(r.record_path);
  test::rewriteField(r.record_path, "build", "lanejit 0.0.1; another build");
  TunedRecord other = findTuned(p, shape, o);
  EXPECT_TRUE(other.found);
  EXPECT_FALSE(other.applies);
  EXPECT_NE(other.message.find("another lanejit build"), std::string::npos) << other.message;

  std::ofstream(r.record_path, std::ios::binary | std::ios::trunc) << original;
  test::rewriteField(r.record_path, "cpu", "x86-64-v9");
  other = findTuned(p, shape, o);
  EXPECT_FALSE(other.applies);
  EXPECT_NE(other.message.find("another target"), std::string::npos) << other.message;
  // Such a record is not used: the kernel runs its own configuration.
  clearKernelCache();
  Kernel k = compile(p, o);
  Kernel untuned = compileCandidate(p, o, tuneCandidates(p, shape, o).front());
  EXPECT_EQ(k.nativeEntry(shape.rows, shape.cols), untuned.nativeEntry(shape.rows, shape.cols));

  std::ofstream(r.record_path, std::ios::binary | std::ios::trunc) << "lanejit-tune-record 1\n";
  other = findTuned(p, shape, o);
  EXPECT_FALSE(other.applies);
  EXPECT_NE(other.message.find("damaged"), std::string::npos) << other.message;
}

TEST_F(Tuner, TuneOnFirstCallMeasuresOnceAndRecords) {
  CompileOptions o = test::targetOptions();
  Program p = library::layerNorm();
  TuneShape shape{48, 16};
  test::Outputs untuned = runOn(compile(p, o), p, shape);
  EXPECT_FALSE(findTuned(p, shape, o).found);
  CompileOptions first = o;
  first.tune_on_first_call = true;
  Kernel k = compile(p, first);
  check::Case c = check::makeCase(p, {shape.rows, shape.cols}, check::Fill::Random, 7);
  k.run(c.inputRefs(), c.outputRefs());
  EXPECT_TRUE(test::sameBits(untuned, test::outputsOf(c)));
  TunedRecord record = findTuned(p, shape, o); // the switch is not part of the key
  EXPECT_TRUE(record.applies) << record.message;
}

TEST_F(Tuner, WithTheCacheOffNothingIsRecorded) {
  ::setenv("LANEJIT_CACHE", "off", 1);
  TuneResult r = tune(library::rmsNorm(), {64, 8}, test::targetOptions(), quick());
  EXPECT_TRUE(r.record_path.empty());
  EXPECT_NE(r.text().find("not recorded"), std::string::npos) << r.text();
  EXPECT_FALSE(findTuned(library::rmsNorm(), {64, 8}, test::targetOptions()).found);
}

TEST_F(Tuner, AShapeTheProgramCannotTakeIsAnError) {
  // RoPE slices C/2: an odd C is refused with the node's message.
  EXPECT_THROW(tune(library::rope(), {8, 7}, test::targetOptions(), quick()), Error);
  TuneSettings s = quick();
  s.threads = 0;
  EXPECT_THROW(tune(library::rmsNorm(), {8, 8}, test::targetOptions(), s), Error);
}

TEST(MappingCosts, TheReportEstimatesBothMappings) {
  Kernel k = compile(library::rmsNorm(), test::targetOptions());
  const CompileReport::Mapping &m = k.report().mapping;
  ASSERT_FALSE(m.costs.empty());
  EXPECT_EQ(m.costs.front().cols, 1);
  EXPECT_EQ(m.costs.back().cols, 64);
  for (const CompileReport::MappingCost &c : m.costs) {
    EXPECT_GT(c.packet_local, 0);
    EXPECT_GT(c.rows_across_lanes, 0);
  }
  // Narrow rows: across lanes is estimated cheaper; the estimate grows with C.
  EXPECT_LT(m.costs[3].rows_across_lanes, m.costs[3].packet_local); // C = 8
  CompileReport::MappingCost wide = estimateMappingCost(k, 1024);
  EXPECT_GT(wide.packet_local, m.costs.back().packet_local);
  EXPECT_NE(k.report().text().find("estimated instructions per row"), std::string::npos);
  EXPECT_NE(k.report().json().find("\"packet_local\""), std::string::npos);
}

} // namespace
} // namespace lanejit
