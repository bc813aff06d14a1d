// `lanejit tune` and `lanejit explain --shape`, run as a user would, each
// in its own process: the record one writes is read by the next, and a
// record of another lanejit build or target is ignored with the reason.
#include "support/cache_home.h"
#include "support/command_line.h"
#include "support/testing.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set by tools/CMakeLists.txt)"
#endif

namespace lanejit {
namespace {

namespace fs = std::filesystem;

class TuneCli : public ::testing::Test {
protected:
  test::CommandResult run(const std::string &args) const {
    return test::runBinary(LANEJIT_CLI_PATH, args, scratch_);
  }
  // The one record in the cache folder.
  std::string recordFile() const {
    std::string found;
    for (const fs::directory_entry &e : fs::directory_iterator(cache_.path() / "lanejit"))
      if (e.path().extension() == ".tune")
        found = e.path().string();
    return found;
  }
  // The children inherit $XDG_CACHE_HOME: a cache folder of this test only.
  test::CacheHome cache_{"lanejit_tune_cli_cache"};
  test::ScratchDir scratch_{"lanejit_tune_cli_test"};
};

using test::has;

TEST_F(TuneCli, ASecondProcessUsesTheRecordAndIgnoresAStaleOne) {
  test::CommandResult tuned = run("tune lib:rmsnorm --shape 64x8 --budget-ms 50");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_TRUE(has(tuned.out, "tune rmsnorm 64x8")) << tuned.out;
  EXPECT_TRUE(has(tuned.out, "(untuned)")) << tuned.out;
  std::smatch chose;
  ASSERT_TRUE(std::regex_search(tuned.out, chose, std::regex("chose ([^;\n]+); recorded in")))
      << tuned.out;
  std::string record = recordFile();
  ASSERT_FALSE(record.empty());

  test::CommandResult explained = run("explain lib:rmsnorm --shape 64x8");
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_TRUE(has(explained.out, "shape 64x8: tune record")) << explained.out;
  EXPECT_TRUE(has(explained.out, "(measured at 64x8): " + chose[1].str())) << explained.out;
  EXPECT_TRUE(has(explained.out, "estimated instructions per row")) << explained.out;
  explained = run("explain lib:rmsnorm --shape 64x8 --json");
  EXPECT_TRUE(has(explained.out, "\"applies\": true")) << explained.out;
  EXPECT_TRUE(has(explained.out, "\"choice\": \"" + chose[1].str() + "\"")) << explained.out;

  test::rewriteField(record, "build", "lanejit 0.0.1; another build");
  explained = run("explain lib:rmsnorm --shape 64x8");
  EXPECT_TRUE(has(explained.out, "ignored: written by another lanejit build")) << explained.out;
  tuned = run("tune lib:rmsnorm --shape 64x8 --budget-ms 20");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  EXPECT_TRUE(has(tuned.out, "before: tune record")) << tuned.out;
  EXPECT_TRUE(has(tuned.out, "another lanejit build")) << tuned.out;

  test::rewriteField(record, "cpu", "x86-64-v9"); // rewritten by the tune above
  explained = run("explain lib:rmsnorm --shape 64x8");
  EXPECT_TRUE(has(explained.out, "ignored: measured for another target")) << explained.out;

  explained = run("explain lib:rmsnorm --shape 64x9");
  EXPECT_TRUE(has(explained.out, "no tune record for 64x9")) << explained.out;
}

TEST_F(TuneCli, BadShapesAndBudgetsAreOneLineErrors) {
  for (const char *shape : {"64", "0x8", "8xq", "8x8x8"}) {
    test::CommandResult r = run(std::string("tune lib:rmsnorm --shape ") + shape);
    EXPECT_EQ(r.exit_code, 1) << shape;
    EXPECT_TRUE(has(r.err, "lanejit: error: shape '" + std::string(shape) + "'")) << r.err;
    EXPECT_TRUE(has(r.err, "expected ROWSxCOLS")) << r.err;
  }
  test::CommandResult r = run("explain lib:rmsnorm --shape 8by8");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "shape '8by8'")) << r.err;
  r = run("tune lib:rmsnorm --shape 8x8 --budget-ms 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "--budget-ms must be positive")) << r.err;
  r = run("tune lib:rope --shape 8x7 --budget-ms 20"); // C/2 at an odd C
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "lanejit: error: ")) << r.err;
}

} // namespace
} // namespace lanejit
