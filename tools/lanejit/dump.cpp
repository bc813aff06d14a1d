// `lanejit dump`, `lanejit explain`, and program loading shared by the
// subcommands.
#include "commands.h"

#include <lanejit/inspect.h>
#include <lanejit/kernel.h>
#include <lanejit/library.h>
#include <lanejit/text.h>

#include <fmt/format.h>

namespace lanejit::cli {

Program loadProgram(const std::string &spec) {
  if (spec.starts_with("lib:"))
    return library::byName(spec.substr(4));
  return parseFile(spec);
}

void dumpCommand(const std::string &spec, const std::string &stage, const CompileOptions &options) {
  Program program = loadProgram(spec);
  // The text stage needs no compilation, so it works for any parsed program.
  if (stage == "text") {
    fmt::print("{}", print(program));
    return;
  }
  Kernel kernel = compile(program, options);
  // "object": the bytes the JIT linked, disassembled (not a recompilation).
  if (stage == "object") {
    fmt::print("{}", inspect::disassemble(kernel.object()));
    return;
  }
  fmt::print("{}", kernel.dump(stage));
}

void explainCommand(const std::string &spec, bool json, const CompileOptions &options) {
  Kernel kernel = compile(loadProgram(spec), options);
  fmt::print("{}", json ? kernel.report().json() : kernel.report().text());
}

} // namespace lanejit::cli
