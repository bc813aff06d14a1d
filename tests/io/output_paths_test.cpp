// Output paths checked before a command starts: each mistake is one line
// that starts with the path at fault, and nothing is created by checking.
#include "io/output_paths.h"

#include "support/command_line.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace lanejit::io {
namespace {

namespace fs = std::filesystem;

class OutputPaths : public ::testing::Test {
protected:
  OutputPaths() {
    fs::create_directories(path("dir"));
    std::ofstream(path("in.npy")) << "input";
    std::ofstream(path("old.npy")) << "previous";
  }
  std::string path(const std::string &name) const { return scratch_.file(name); }

  // The message checkOutputPaths throws, or "" when it accepts.
  std::string errorFor(const std::vector<std::string> &outputs,
                       const std::vector<std::string> &inputs = {}) {
    try {
      checkOutputPaths(outputs, inputs);
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Io);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    return "";
  }

  test::ScratchDir scratch_{"lanejit_output_paths_test"};
};

TEST_F(OutputPaths, AcceptsNewAndExistingFilesInWritableDirectories) {
  EXPECT_EQ(errorFor({path("new.npy"), path("old.npy"), path("dir/new.npy")}, {path("in.npy")}),
            "");
  EXPECT_FALSE(fs::exists(path("new.npy"))) << "checking creates nothing";
}

TEST_F(OutputPaths, RelativePathsAreCheckedInTheCurrentDirectory) {
  std::string name = "lanejit_output_paths_test_" + std::to_string(::getpid()) + ".npy";
  EXPECT_EQ(errorFor({name}), "");
  EXPECT_EQ(errorFor({name, (fs::current_path() / name).string()}),
            (fs::current_path() / name).string() + ": is the same file as output " + name);
  EXPECT_EQ(errorFor({"no-such-dir/x.npy"}), "no-such-dir/x.npy: directory " +
                                                 (fs::current_path() / "no-such-dir").string() +
                                                 " does not exist");
  EXPECT_FALSE(fs::exists(name));
}

TEST_F(OutputPaths, RejectsWhatCannotBeAFile) {
  EXPECT_EQ(errorFor({""}), "an output path is empty");
  EXPECT_EQ(errorFor({path("dir")}), path("dir") + ": is a directory; an output must be a file");
  EXPECT_EQ(errorFor({"/dev/full"}), "/dev/full: is not a regular file; an output must be a file");
  EXPECT_EQ(errorFor({path("no/such/x.npy")}),
            path("no/such/x.npy") + ": directory " + path("no/such") + " does not exist");
  EXPECT_EQ(errorFor({path("old.npy/x.npy")}),
            path("old.npy/x.npy") + ": " + path("old.npy") + " is not a directory");
}

TEST_F(OutputPaths, RejectsOneFileNamedTwiceHoweverSpelt) {
  EXPECT_EQ(errorFor({path("a.npy"), path("a.npy")}), path("a.npy") + ": named twice as an output");
  EXPECT_EQ(errorFor({path("a.npy"), path("dir/../a.npy")}),
            path("dir/../a.npy") + ": is the same file as output " + path("a.npy"));
  fs::create_symlink(path("old.npy"), path("sym.npy"));
  EXPECT_EQ(errorFor({path("old.npy"), path("sym.npy")}),
            path("sym.npy") + ": is the same file as output " + path("old.npy"));
  fs::create_hard_link(path("old.npy"), path("hard.npy"));
  EXPECT_EQ(errorFor({path("old.npy"), path("hard.npy")}),
            path("hard.npy") + ": is the same file as output " + path("old.npy"));
}

TEST_F(OutputPaths, RejectsAnInputAsOutput) {
  EXPECT_EQ(errorFor({path("in.npy")}, {path("in.npy")}),
            path("in.npy") + ": is also an input; write the output to another file");
  fs::create_symlink(path("in.npy"), path("sym.npy"));
  EXPECT_EQ(errorFor({path("sym.npy")}, {path("in.npy")}),
            path("sym.npy") + ": is the same file as input " + path("in.npy") +
                "; write the output to another file");
}

} // namespace
} // namespace lanejit::io
