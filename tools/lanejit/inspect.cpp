// `lanejit inspect`: code metrics read from the kernel's object, as text or
// JSON, or the difference between two switch settings.
#include "commands.h"
#include "compile_flags.h"
#include "io/read_file.h"

#include <lanejit/error.h>
#include <lanejit/inspect.h>
#include <lanejit/kernel.h>

#include <fmt/format.h>

namespace lanejit::cli {
namespace {

[[noreturn]] void badSwitch(const std::string &message) {
  throw Error(Error::Kind::Bind, "--diff: " + message);
}

} // namespace

// An object file given directly (e.g. one `lanejit aot` wrote).
void inspectObjectFile(const InspectArgs &args) {
  if (!args.diff.empty())
    badSwitch("compares two compiles of a program, not object files");
  std::string bytes = io::readUserFile(args.program);
  if (args.disassemble) {
    fmt::print("{}", inspect::disassemble(bytes));
    return;
  }
  inspect::ObjectReport report = inspect::inspectObject(bytes);
  fmt::print("{}", args.json ? inspect::toJson(report) : inspect::toText(report));
}

void inspectCommand(const InspectArgs &args) {
  if (args.program.ends_with(".o")) {
    inspectObjectFile(args);
    return;
  }
  Program program = loadProgram(args.program);
  Kernel kernel = compile(program, args.options);
  if (args.disassemble) {
    fmt::print("{}", inspect::disassemble(kernel.object()));
    return;
  }
  inspect::ObjectReport report = inspect::inspectKernel(kernel);
  if (args.diff.empty() && args.json) {
    fmt::print("{}", inspect::toJson(report));
    return;
  }
  if (args.diff.empty()) {
    const CompileReport &s = kernel.report();
    fmt::print("kernel: {}, {} lanes, full-packet specialization {}, opt level {}, cpu {}\n",
               program.name, s.mapping.lanes, args.options.specialize_full_packets ? "on" : "off",
               args.options.opt_level, s.cpu);
    fmt::print("{}", inspect::toText(report));
    return;
  }
  if (args.diff.find_first_not_of(" ") == std::string::npos)
    badSwitch(
        "give the second setting's switches, e.g. --diff=\"--disable SPECIALIZE_FULL_PACKETS\"");
  inspect::ObjectReport other =
      inspect::inspectKernel(compile(program, applySwitches(args.options, args.diff)));
  if (args.json) {
    fmt::print("{{\"before\": {},\"after\": {}}}\n", inspect::toJson(report),
               inspect::toJson(other));
    return;
  }
  fmt::print("{}", inspect::diff(report, other, args.program + " (given switches)",
                                 args.program + " with " + args.diff));
}

} // namespace lanejit::cli
