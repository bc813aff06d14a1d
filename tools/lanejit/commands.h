// The `lanejit` command line: one function per subcommand. Each throws
// lanejit::Error (or std::exception) on failure; main() turns that into a
// one-line "lanejit: error: ..." and exit code 1.
#pragma once

#include <lanejit/ir.h>
#include <lanejit/options.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace lanejit::cli {

// A path to a text program, or "lib:NAME" for a library operator.
Program loadProgram(const std::string &spec);

struct RunArgs {
  std::string program;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::vector<std::string> outputs; // NAME=FILE.npy
  CompileOptions options;
  std::optional<int> threads; // --threads (compile() refuses < 1)
};
// Binds the .npy inputs, runs the compiled program, writes the outputs.
void runCommand(const RunArgs &args);

// Prints the program ("text") or a compiled stage ("passes", "ir",
// "llvm-unoptimized", "llvm", "asm", "object": the JIT's object disassembled);
// cols > 0: the code stages of the entry specialised for that C.
void dumpCommand(const std::string &program, const std::string &stage,
                 const CompileOptions &options, int64_t cols = 0, bool rowsAcrossLanes = false);

// Prints the kernel's compile report, as text or JSON; with a shape
// ("RxC", or "" for none), also the mapping costs at its C and whether a
// tune record applies.
void explainCommand(const std::string &program, bool json, const CompileOptions &options,
                    const std::string &shape = "");
struct InspectArgs {
  std::string program;
  CompileOptions options;
  bool json = false;
  bool disassemble = false;
  std::string diff; // switches for a second compile to compare with, or empty
  std::vector<std::string> functions; // --function: only these (and their parts)
};
// Prints the code metrics of the kernel's object (inspect.cpp).
void inspectCommand(const InspectArgs &args);

struct AotArgs {
  std::string program;
  std::string object_path, header_path;
  CompileOptions options;
};
// Writes the JIT's object and a C header for its entry (aot.cpp).
void aotCommand(const AotArgs &args);

// Adds `lanejit bench` to `app`; main() calls the returned function when the
// subcommand was chosen and exits with its result (bench.cpp).
std::function<int()> addBenchCommand(CLI::App &app);
// Adds `lanejit tune PROGRAM --shape RxC` the same way (tune.cpp).
std::function<int()> addTuneCommand(CLI::App &app);
// Adds `lanejit audit BUNDLE` the same way (audit.cpp).
std::function<int()> addAuditCommand(CLI::App &app);
// Adds `lanejit cache [--clear]` the same way (cache.cpp).
std::function<int()> addCacheCommand(CLI::App &app);

} // namespace lanejit::cli
