// A directory that appears whole or not at all: invisible under its name
// until commit(), gone without a trace when the writer fails first.
#include "io/staged_directory.h"

#include "io/staged_files.h"
#include "support/command_line.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lanejit::io {
namespace {

namespace fs = std::filesystem;

class StagedDirectoryTest : public ::testing::Test {
protected:
  fs::path path(const std::string &name) const { return scratch_.path() / name; }

  std::vector<std::string> listing() const { return test::sortedNames(scratch_.path()); }

  std::string errorFor(const fs::path &dir) {
    try {
      StagedDirectory staged(dir);
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Io);
      return e.what();
    }
    return "";
  }

  test::ScratchDir scratch_{"lanejit_staged_directory_test"};
};

TEST_F(StagedDirectoryTest, AppearsOnlyWhenCommitted) {
  StagedDirectory staged(path("out/bundle"));
  fs::create_directories(staged.staging() / "inputs");
  writeFileAtomically((staged.staging() / "inputs/a.txt").string(), "a");
  EXPECT_FALSE(fs::exists(path("out/bundle")));
  EXPECT_EQ(staged.staging().parent_path(), path("out"));
  EXPECT_EQ(staged.staging().filename().string().rfind(".bundle.partial-", 0), 0u);
  staged.commit();
  EXPECT_EQ(staged.path(), path("out/bundle"));
  EXPECT_EQ(test::slurp(path("out/bundle/inputs/a.txt")), "a");
  EXPECT_FALSE(fs::exists(staged.staging()));
  std::vector<std::string> in_out;
  for (const fs::directory_entry &e : fs::directory_iterator(path("out")))
    in_out.push_back(e.path().filename().string());
  EXPECT_EQ(in_out, std::vector<std::string>{"bundle"});
}

TEST_F(StagedDirectoryTest, AWriterThatFailsLeavesNothing) {
  try {
    StagedDirectory staged(path("bundle"));
    writeFileAtomically((staged.staging() / "a.txt").string(), "a");
    throw std::runtime_error("the run failed part-way");
  } catch (const std::runtime_error &) {
  }
  EXPECT_EQ(listing(), std::vector<std::string>{});
}

TEST_F(StagedDirectoryTest, ReplacesAnEmptyDirectoryOnly) {
  fs::create_directories(path("empty"));
  {
    StagedDirectory staged(path("empty/"));
    writeFileAtomically((staged.staging() / "a.txt").string(), "a");
    staged.commit();
  }
  EXPECT_EQ(test::slurp(path("empty/a.txt")), "a");
  EXPECT_EQ(errorFor(path("empty")),
            path("empty").string() + ": exists and is not empty; a bundle needs a fresh directory");
  std::ofstream(path("file")) << "previous";
  EXPECT_EQ(errorFor(path("file")), path("file").string() +
                                        ": exists and is not a directory; a bundle needs a fresh "
                                        "directory");
  EXPECT_EQ(test::slurp(path("file")), "previous");
  EXPECT_EQ(listing(), (std::vector<std::string>{"empty", "file"}));
}

TEST_F(StagedDirectoryTest, CommitRefusesADirectoryFilledMeanwhile) {
  StagedDirectory staged(path("bundle"));
  fs::create_directories(path("bundle"));
  std::ofstream(path("bundle/other.txt")) << "someone else's";
  EXPECT_THROW(staged.commit(), Error);
  EXPECT_EQ(test::slurp(path("bundle/other.txt")), "someone else's");
}

} // namespace
} // namespace lanejit::io
