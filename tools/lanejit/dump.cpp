// `lanejit dump`, `lanejit explain`, and program loading shared by the
// subcommands.
#include "commands.h"

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
  fmt::print("{}", compile(program, options).dump(stage));
}

void explainCommand(const std::string &spec, bool json, const CompileOptions &options) {
  Kernel kernel = compile(loadProgram(spec), options);
  fmt::print("{}", json ? kernel.report().json() : kernel.report().text());
}

} // namespace lanejit::cli
