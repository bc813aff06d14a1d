// bench/child_process.h — run a helper executable of the bench (a probe) in
// a child process with a changed environment and collect its stdout. The
// bench measures in children what a process cannot measure about itself:
// ATen's capability before ATen runs, and a compile in a fresh process.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lanejit::bench {

struct ChildRun {
  bool exited_ok = false; // started, exited normally with status 0
  std::string out;        // its stdout
  std::string error;      // why not, when !exited_ok
};

// Runs `path args...` with this process's environment, minus every variable
// named in `unset`, plus `set` (NAME, value); waits for it.
ChildRun runChild(const std::string &path, const std::vector<std::string> &args,
                  const std::vector<std::pair<std::string, std::string>> &set = {},
                  const std::vector<std::string> &unset = {});

// `name` next to this executable, else `fallback` (a build path), else "".
std::string siblingExecutable(const std::string &name, const std::string &fallback = "");

} // namespace lanejit::bench
