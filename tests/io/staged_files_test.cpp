// Files written whole or not at all: the new bytes or the old file, never
// part of either, and no temporary file left behind either way.
#include "io/staged_files.h"

#include "support/command_line.h"

#include <lanejit/error.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>

namespace lanejit::io {
namespace {

namespace fs = std::filesystem;

class StagedFilesTest : public ::testing::Test {
protected:
  std::string path(const std::string &name) const { return scratch_.file(name); }

  std::vector<std::string> listing() const { return test::sortedNames(scratch_.path()); }

  // The message `write` throws; fails the test if it does not throw.
  template <typename F> std::string errorOf(F write) {
    try {
      write();
    } catch (const Error &e) {
      EXPECT_EQ(e.kind(), Error::Kind::Io);
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "expected an error";
    return "";
  }

  test::ScratchDir scratch_{"lanejit_staged_files_test"};
};

// Files limited to `bytes` and SIGXFSZ ignored while it lives, so a longer
// write fails with EFBIG: a write failure that happens even as root.
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &limit);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, old_handler_);
  }

private:
  rlimit saved_{};
  void (*old_handler_)(int) = nullptr;
};

TEST_F(StagedFilesTest, WritesANewFileAndReplacesAnOldOne) {
  writeFileAtomically(path("a.txt"), "first");
  EXPECT_EQ(test::slurp(path("a.txt")), "first");
  writeFileAtomically(path("a.txt"), "second, longer");
  EXPECT_EQ(test::slurp(path("a.txt")), "second, longer");
  writeFileAtomically(path("a.txt"), "");
  EXPECT_EQ(test::slurp(path("a.txt")), "");
  EXPECT_EQ(listing(), std::vector<std::string>{"a.txt"});
}

TEST_F(StagedFilesTest, ARelativePathIsWrittenInTheCurrentDirectory) {
  fs::path saved = fs::current_path();
  fs::current_path(scratch_.path());
  writeFileAtomically("a.txt", "relative");
  fs::current_path(saved);
  EXPECT_EQ(test::slurp(path("a.txt")), "relative");
  EXPECT_EQ(listing(), std::vector<std::string>{"a.txt"});
}

TEST_F(StagedFilesTest, AFailedWriteLeavesThePreviousFileAndNoTemporaryFile) {
  std::ofstream(path("a.txt")) << "previous";
  std::string message;
  {
    FileSizeLimit limit(4096);
    message = errorOf([&] { writeFileAtomically(path("a.txt"), std::string(100000, 'x')); });
  }
  EXPECT_EQ(message, path("a.txt") + ": cannot write: File too large");
  EXPECT_EQ(test::slurp(path("a.txt")), "previous");
  EXPECT_EQ(listing(), std::vector<std::string>{"a.txt"});
}

TEST_F(StagedFilesTest, NothingIsReplacedUntilEveryFileIsStaged) {
  std::ofstream(path("a.txt")) << "previous a";
  std::ofstream(path("b.txt")) << "previous b";
  {
    FileSizeLimit limit(4096);
    StagedFiles files;
    files.add(path("a.txt"), "new a");
    errorOf([&] { files.add(path("b.txt"), std::string(100000, 'x')); });
    // `files` goes without commit(): a's staged copy must go with it.
  }
  EXPECT_EQ(test::slurp(path("a.txt")), "previous a");
  EXPECT_EQ(test::slurp(path("b.txt")), "previous b");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.txt", "b.txt"}));

  StagedFiles files;
  files.add(path("a.txt"), "new a");
  files.add(path("b.txt"), "new b");
  EXPECT_EQ(test::slurp(path("a.txt")), "previous a") << "replaced before commit()";
  files.commit();
  EXPECT_EQ(test::slurp(path("a.txt")), "new a");
  EXPECT_EQ(test::slurp(path("b.txt")), "new b");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST_F(StagedFilesTest, PathsThatCannotBeFilesAreErrorsNamingThem) {
  fs::create_directories(path("dir"));
  std::ofstream(path("file")) << "previous";
  EXPECT_EQ(errorOf([&] { writeFileAtomically(path("dir"), "x"); }),
            path("dir") + ": is a directory");
  EXPECT_EQ(errorOf([&] { writeFileAtomically("/dev/full", "x"); }),
            "/dev/full: is not a regular file");
  EXPECT_TRUE(fs::is_character_file("/dev/full"));
  std::string under = errorOf([&] { writeFileAtomically(path("file/x"), "x"); });
  EXPECT_EQ(under.rfind(path("file/x") + ": cannot create a file in", 0), 0u) << under;
  std::string missing = errorOf([&] { writeFileAtomically(path("no/such/x"), "x"); });
  EXPECT_EQ(missing.rfind(path("no/such/x") + ": cannot create a file in", 0), 0u) << missing;
  EXPECT_EQ(errorOf([&] { writeFileAtomically("", "x"); }), "an output path is empty");
  EXPECT_EQ(test::slurp(path("file")), "previous");
  EXPECT_EQ(listing(), (std::vector<std::string>{"dir", "file"}));
}

TEST_F(StagedFilesTest, ASymbolicLinkStaysAndItsFileIsReplaced) {
  fs::create_directories(path("real"));
  std::ofstream(path("real/a.txt")) << "previous";
  fs::create_symlink(path("real/a.txt"), path("link.txt"));
  writeFileAtomically(path("link.txt"), "new");
  EXPECT_TRUE(fs::is_symlink(path("link.txt")));
  EXPECT_EQ(test::slurp(path("real/a.txt")), "new");
}

TEST_F(StagedFilesTest, AReplacedFileKeepsItsModeAndANewOneFollowsTheUmask) {
  std::ofstream(path("a.txt")) << "previous";
  fs::permissions(path("a.txt"), fs::perms::owner_read | fs::perms::owner_write);
  writeFileAtomically(path("a.txt"), "new");
  EXPECT_EQ(fs::status(path("a.txt")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);

  mode_t saved = ::umask(027);
  writeFileAtomically(path("b.txt"), "new");
  ::umask(saved);
  EXPECT_EQ(fs::status(path("b.txt")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

} // namespace
} // namespace lanejit::io
