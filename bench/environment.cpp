// The environment record (bench/environment.h).
#include "environment.h"

#include "sha256.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#ifndef LANEJIT_LLVM_VERSION
#define LANEJIT_LLVM_VERSION "unknown"
#endif
#ifndef LANEJIT_SOURCE_DIR
#define LANEJIT_SOURCE_DIR "."
#endif

namespace lanejit::bench {
namespace {

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0)
      continue;
    size_t colon = line.find(':');
    return colon == std::string::npos ? line : line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown";
}

// The first line a shell command prints, or "" when it fails.
std::string firstLine(const std::string &command) {
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(popen(command.c_str(), "r"), &pclose);
  if (!pipe)
    return "";
  char buffer[256];
  std::string line;
  if (std::fgets(buffer, sizeof buffer, pipe.get()))
    line = buffer;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return line;
}

} // namespace

std::array<double, 3> loadAverage() {
  std::array<double, 3> load{};
  if (getloadavg(load.data(), 3) != 3)
    load = {0, 0, 0};
  return load;
}

std::vector<std::string> loadedSharedObjects() {
  std::vector<std::string> objects;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash == std::string::npos)
      continue;
    std::string path = line.substr(slash);
    if (path.find(".so") == std::string::npos || path.find(" (deleted)") != std::string::npos)
      continue;
    if (std::find(objects.begin(), objects.end(), path) == objects.end())
      objects.push_back(path);
  }
  std::sort(objects.begin(), objects.end());
  return objects;
}

EnvironmentRecord captureEnvironment(const std::string &compile_options) {
  EnvironmentRecord env;
  env.cpu_model = cpuModel();
  env.cores = static_cast<int>(std::thread::hardware_concurrency());
  env.load_before = loadAverage();
  env.llvm_version = LANEJIT_LLVM_VERSION;
  env.compile_options = compile_options;
  std::string git = "git -C '" + std::string(LANEJIT_SOURCE_DIR) + "' ";
  env.git_commit = firstLine(git + "rev-parse HEAD 2>/dev/null");
  if (env.git_commit.empty())
    env.git_commit = "unknown";
  else
    env.git_dirty = !firstLine(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  std::error_code error;
  env.binaries.push_back({std::filesystem::read_symlink("/proc/self/exe", error).string(),
                          bench::sha256File("/proc/self/exe")});
  return env;
}

} // namespace lanejit::bench
