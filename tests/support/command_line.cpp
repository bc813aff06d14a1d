#include "support/command_line.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace lanejit::test {

ScratchDir::ScratchDir(const std::string &prefix) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string test = info ? std::string(info->test_suite_name()) + "_" + info->name() : "";
  for (char &c : test)
    if (c == '/')
      c = '_';
  path_ = std::filesystem::temp_directory_path() /
          (prefix + "_" + std::to_string(::getpid()) + "_" + test);
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

int shell(const std::string &command) {
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> sortedNames(const std::filesystem::path &dir) {
  std::vector<std::string> names;
  for (const std::filesystem::directory_entry &e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string slurp(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult runBinary(const std::string &binary, const std::string &args,
                        const ScratchDir &scratch) {
  std::string out = scratch.file("command.stdout"), err = scratch.file("command.stderr");
  CommandResult r;
  r.exit_code = shell("'" + binary + "' " + args + " >'" + out + "' 2>'" + err + "'");
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

} // namespace lanejit::test
