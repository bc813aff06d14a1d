// `lanejit aot`: the JIT's object for a program, and a C header for its
// entry, written for a native link (docs/aot.md).
#include "commands.h"

#include "io/output_paths.h"
#include "io/staged_files.h"

#include <lanejit/aot.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace lanejit::cli {

void aotCommand(const AotArgs &args) {
  // Both paths checked before compiling; both files staged before either
  // replaces what was there.
  std::vector<std::string> outputs{args.object_path};
  if (!args.header_path.empty())
    outputs.push_back(args.header_path);
  std::vector<std::string> inputs;
  if (!args.program.starts_with("lib:"))
    inputs.push_back(args.program);
  io::checkOutputPaths(outputs, inputs);
  Program program = loadProgram(args.program);
  // build() refuses an object with imports outside the documented set
  // before anything is written.
  aot::Artifacts a = aot::build(compile(program, args.options));
  io::StagedFiles files;
  files.add(args.object_path, a.object);
  if (!args.header_path.empty())
    files.add(args.header_path, a.header);
  files.commit();
  fmt::print("wrote {} (entry {}, imports: {}){}\n", args.object_path, a.entry_symbol,
             a.imports.empty() ? "none" : fmt::format("{}", fmt::join(a.imports, ", ")),
             args.header_path.empty() ? "" : " and " + args.header_path);
}

} // namespace lanejit::cli
