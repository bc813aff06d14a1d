// io::readFile: a whole file's bytes, or nullopt with errno saying why.
#include "io/read_file.h"

#include "support/command_line.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

namespace lanejit::io {
namespace {

namespace fs = std::filesystem;

class ReadFile : public ::testing::Test {
protected:
  test::ScratchDir scratch{"lanejit_read_file"};
  const fs::path &dir = scratch.path();
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
