// tests/support/command_line.h — running built binaries (the `lanejit` CLI,
// a linked AOT driver, the C compiler) from tests, in a scratch folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace lanejit::test {

// A fresh folder under the system temp dir, named after the running test;
// removed with everything in it when the object goes.
class ScratchDir {
public:
  explicit ScratchDir(const std::string &prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::filesystem::path &path() const { return path_; }
  std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1; // -1 when the command did not exit normally
  std::string out, err;
};

// Runs `'binary' args` through the shell; stdout and stderr are captured in
// files inside `scratch` and read back.
CommandResult runBinary(const std::string &binary, const std::string &args,
                        const ScratchDir &scratch);

// Runs a shell command line; its exit code, or -1.
int shell(const std::string &command);

// The names of the entries of a directory, sorted.
std::vector<std::string> sortedNames(const std::filesystem::path &dir);

// A whole file's bytes ("" when it cannot be read).
std::string slurp(const std::filesystem::path &path);

} // namespace lanejit::test
