// io::readFile: a whole file's bytes, or nullopt with errno saying why.
#include "io/read_file.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace lanejit::io {
namespace {

namespace fs = std::filesystem;

class ReadFile : public ::testing::Test {
protected:
  fs::path dir = fs::temp_directory_path() / ("lanejit-read-file-" + std::to_string(::getpid()));
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(ReadFile, ReturnsEveryByte) {
  // Before: binary content with NULs, larger than one read, and an empty file.
  std::string bytes;
  for (int i = 0; i < 300000; ++i)
    bytes += static_cast<char>(i * 7 % 256);
  std::ofstream(dir / "big", std::ios::binary) << bytes;
  std::ofstream(dir / "empty", std::ios::binary);
  // Expected: exactly those bytes.
  EXPECT_EQ(readFile((dir / "big").string()), bytes);
  EXPECT_EQ(readFile((dir / "empty").string()), std::string());
}

TEST_F(ReadFile, SaysWhyItCannot) {
  errno = 0;
  EXPECT_EQ(readFile((dir / "missing").string()), std::nullopt);
  EXPECT_EQ(errno, ENOENT);
  errno = 0;
  EXPECT_EQ(readFile(dir.string()), std::nullopt);
  EXPECT_EQ(errno, EISDIR);
}

} // namespace
} // namespace lanejit::io
