// Compile times in fresh processes (bench/compile_times.h).
#include "compile_times.h"

#include "child_process.h"

#include <lanejit/text.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace lanejit::bench {
namespace fs = std::filesystem;

namespace {

struct ProbeOutput {
  double first_ms = 0, again_ms = 0;
  int disk_hit = 0;
};

std::optional<ProbeOutput> probe(const std::string &path, const fs::path &program,
                                 const std::string &key, const fs::path &cache, std::string *why) {
  ChildRun run = runChild(path, {program.string(), key}, {{"XDG_CACHE_HOME", cache.string()}},
                          {"LANEJIT_CACHE", "LANEJIT_ENABLE_TIME_PASSES"});
  ProbeOutput out;
  if (!run.exited_ok || std::sscanf(run.out.c_str(), "first_ms=%lf disk_hit=%d again_ms=%lf",
                                    &out.first_ms, &out.disk_hit, &out.again_ms) != 3) {
    if (why)
      *why = run.exited_ok ? "unexpected probe output '" + run.out + "'" : run.error;
    return std::nullopt;
  }
  return out;
}

} // namespace

std::optional<CompileTimesRecord>
measureCompileTimes(const Program &program, const CompileOptions &options, std::string *why) {
  std::string path = siblingExecutable("../libexec/lanejit/lanejit_compile_probe");
  if (path.empty()) // the build tree
    path = siblingExecutable("lanejit_compile_probe", LANEJIT_COMPILE_PROBE_PATH);
  if (path.empty()) {
    if (why)
      *why = "lanejit_compile_probe not found";
    return std::nullopt;
  }
  static std::atomic<int> counter{0};
  fs::path dir =
      fs::temp_directory_path() /
      ("lanejit-bench-compile-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::create_directories(dir / "cache");
  fs::path file = dir / "program.lj";
  std::ofstream(file) << print(program);
  std::optional<CompileTimesRecord> result;
  auto cold = probe(path, file, options.key(), dir / "cache", why);
  auto cached = cold ? probe(path, file, options.key(), dir / "cache", why) : std::nullopt;
  if (cold && cached)
    result =
        CompileTimesRecord{cold->first_ms, cold->again_ms, cached->first_ms, cached->disk_hit == 1};
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return result;
}

} // namespace lanejit::bench
