// `lanejit aot`: the JIT's object for a program, and a C header for its
// entry, written for a native link (docs/aot.md).
#include "commands.h"

#include <lanejit/aot.h>
#include <lanejit/error.h>
#include <lanejit/kernel.h>

#include <fmt/format.h>

#include <fstream>

namespace lanejit::cli {
namespace {

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw Error(Error::Kind::Io, "cannot write " + path);
}

} // namespace

void aotCommand(const AotArgs &args) {
  Program program = loadProgram(args.program);
  // build() refuses an object with imports outside the documented set
  // before anything is written.
  aot::Artifacts a = aot::build(compile(program, args.options));
  writeFile(args.object_path, a.object);
  if (!args.header_path.empty())
    writeFile(args.header_path, a.header);
  fmt::print("wrote {} (entry {}, imports: {}){}\n", args.object_path, a.entry_symbol,
             a.imports.empty() ? "none" : fmt::format("{}", fmt::join(a.imports, ", ")),
             args.header_path.empty() ? "" : " and " + args.header_path);
}

} // namespace lanejit::cli
