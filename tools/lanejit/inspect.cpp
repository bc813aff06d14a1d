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

// A relocatable object (NAME.o, e.g. one `lanejit aot` wrote) or a shared
// object (NAME.so, NAME.so.1, e.g. a TorchInductor kernel's).
bool isObjectPath(const std::string &path) {
  if (path.ends_with(".o") || path.ends_with(".so"))
    return true;
  size_t so = path.rfind(".so.");
  return so != std::string::npos &&
         path.find_first_not_of("0123456789.", so + 4) == std::string::npos;
}

// What llvm-mca models: the CPU the kernel was compiled for; for an object
// file (which records no CPU) --target-cpu, else the architecture's generic
// model, named as such in the report.
inspect::McaTarget mcaTarget(const std::string &cpu, const std::string &features) {
  inspect::McaTarget t;
  t.cpu = cpu;
  t.features = features;
  return t;
}

inspect::ObjectReport inspectCompiled(const Kernel &kernel, const InspectArgs &args) {
  const CompileReport &s = kernel.report();
  return inspect::inspectObject(kernel.object(), args.functions, mcaTarget(s.cpu, s.features));
}

// An object file given directly.
void inspectObjectFile(const InspectArgs &args) {
  if (!args.diff.empty())
    badSwitch("compares two compiles of a program, not object files");
  std::string bytes = io::readUserFile(args.program);
  if (args.disassemble) {
    fmt::print("{}", inspect::disassemble(bytes, args.functions));
    return;
  }
  inspect::ObjectReport report = inspect::inspectObject(
      bytes, args.functions,
      mcaTarget(args.options.target_cpu, args.options.target_cpu.empty()
                                             ? std::string()
                                             : args.options.target_features));
  fmt::print("{}", args.json ? inspect::toJson(report) : inspect::toText(report));
}

} // namespace

void inspectCommand(const InspectArgs &args) {
  if (isObjectPath(args.program)) {
    inspectObjectFile(args);
    return;
  }
  Program program = loadProgram(args.program);
  Kernel kernel = compile(program, args.options);
  if (args.disassemble) {
    fmt::print("{}", inspect::disassemble(kernel.object(), args.functions));
    return;
  }
  inspect::ObjectReport report = inspectCompiled(kernel, args);
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
  Kernel second = compile(program, applySwitches(args.options, args.diff));
  inspect::ObjectReport other = inspectCompiled(second, args);
  if (args.json) {
    fmt::print("{{\"before\": {},\"after\": {}}}\n", inspect::toJson(report),
               inspect::toJson(other));
    return;
  }
  fmt::print("{}", inspect::diff(report, other, args.program + " (given switches)",
                                 args.program + " with " + args.diff));
}

} // namespace lanejit::cli
