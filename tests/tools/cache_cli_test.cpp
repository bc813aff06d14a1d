// `lanejit cache` and `lanejit cache --clear`, run as a user would: the
// folder, lanejit's entries, their size and the cap are shown; clearing
// removes lanejit's files and nothing else.
#include "support/cache_home.h"
#include "support/command_line.h"
#include "support/testing.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#ifndef LANEJIT_CLI_PATH
#error "LANEJIT_CLI_PATH must name the lanejit binary (set by tools/CMakeLists.txt)"
#endif

namespace lanejit {
namespace {

namespace fs = std::filesystem;

class CacheCli : public ::testing::Test {
protected:
  void SetUp() override { ::unsetenv("LANEJIT_CACHE_MAX_MB"); }
  void TearDown() override { ::unsetenv("LANEJIT_CACHE_MAX_MB"); }
  test::CommandResult run(const std::string &args) const {
    return test::runBinary(LANEJIT_CLI_PATH, args, scratch_);
  }
  fs::path folder() const { return cache_.path() / "lanejit"; }
  // The children inherit $XDG_CACHE_HOME: a cache folder of this test only.
  test::CacheHome cache_{"lanejit_cache_cli_cache"};
  test::ScratchDir scratch_{"lanejit_cache_cli_test"};
};

using test::has;

TEST_F(CacheCli, ShowsTheFolderAndClearsOnlyLanejitsFiles) {
  // Before: an empty cache.
  test::CommandResult shown = run("cache");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_TRUE(has(shown.out, "folder: " + folder().string() + "\n")) << shown.out;
  EXPECT_TRUE(has(shown.out, "entries: 0 objects, 0 tune records, 0 temporaries")) << shown.out;
  EXPECT_TRUE(has(shown.out, "cap: 256.0 MiB (the default)")) << shown.out;
  // Two kernels compiled by other processes, and a file of someone else's.
  ASSERT_EQ(run("explain lib:rope").exit_code, 0);
  ASSERT_EQ(run("explain lib:swiglu").exit_code, 0);
  std::ofstream(folder() / "notes.txt") << "not lanejit's";
  shown = run("cache");
  EXPECT_TRUE(has(shown.out, "entries: 2 objects, 0 tune records, 0 temporaries")) << shown.out;
  EXPECT_TRUE(has(shown.out, "other files: 1")) << shown.out;
  EXPECT_FALSE(has(shown.out, "size: 0 B")) << shown.out;

  // Action: clear.
  test::CommandResult cleared = run("cache --clear");
  // Expected: lanejit's files gone, the other file kept.
  ASSERT_EQ(cleared.exit_code, 0) << cleared.err;
  EXPECT_TRUE(has(cleared.out, "cleared " + folder().string() +
                                   ": removed 2 objects, 0 tune records, 0 temporaries"))
      << cleared.out;
  EXPECT_TRUE(has(cleared.out, "other files: 1 (not lanejit's: left)")) << cleared.out;
  EXPECT_EQ(test::sortedNames(folder()), std::vector<std::string>{"notes.txt"});
  shown = run("cache");
  EXPECT_TRUE(has(shown.out, "entries: 0 objects")) << shown.out;
  // The next compile stores again.
  ASSERT_EQ(run("explain lib:rope").exit_code, 0);
  EXPECT_TRUE(has(run("cache").out, "entries: 1 objects")) << shown.out;
}

TEST_F(CacheCli, TheCapFollowsLanejitCacheMaxMb) {
  ::setenv("LANEJIT_CACHE_MAX_MB", "512", 1);
  EXPECT_TRUE(has(run("cache").out, "cap: 512.0 MiB (LANEJIT_CACHE_MAX_MB)"));
  ::setenv("LANEJIT_CACHE_MAX_MB", "0", 1);
  EXPECT_TRUE(has(run("cache").out, "cap: none"));
  ::setenv("LANEJIT_CACHE_MAX_MB", "1GB", 1);
  test::CommandResult shown = run("cache");
  EXPECT_EQ(shown.exit_code, 0);
  EXPECT_TRUE(has(shown.out, "cap: 256.0 MiB (the default)")) << shown.out;
  EXPECT_TRUE(has(shown.out, "LANEJIT_CACHE_MAX_MB='1GB' ignored")) << shown.out;
}

TEST_F(CacheCli, WithoutAHomeItIsAOneLineError) {
  test::CommandResult r = test::runBinary(
      "/usr/bin/env", std::string("-u XDG_CACHE_HOME -u HOME '") + LANEJIT_CLI_PATH + "' cache",
      scratch_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "lanejit: error: the persistent cache has no folder")) << r.err;
}

} // namespace
} // namespace lanejit
