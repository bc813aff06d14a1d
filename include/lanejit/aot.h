// lanejit/aot.h — a compiled kernel as an object file and a C header, to
// link into a program that has no LLVM (docs/aot.md).
//
//   aot::Artifacts a = aot::build(compile(library::rope()));
//   // write a.object to kernel.o and a.header to kernel.h
//
// The object is the one the JIT linked for this kernel (Kernel::object()),
// not a recompilation, so the AOT entry computes the same bits as
// Kernel::run on the same inputs.
#pragma once

#include <lanejit/kernel.h>

#include <string>
#include <string_view>
#include <vector>

namespace lanejit::aot {

struct Artifacts {
  std::string object;               // relocatable ELF, position-independent
  std::string header;               // C declarations of the entry and its arguments
  std::string entry_symbol;         // the entry's name in the object
  std::vector<std::string> imports; // undefined symbols (all allowed)
};

// Throws Error(Kind::Compile) when the object imports a symbol outside
// inspect::allowedImports(), naming every such import.
Artifacts build(const Kernel &kernel);

// Throws Error(Kind::Compile) naming every import of `object` outside
// inspect::allowedImports() (what build() checks); `what` names the object.
void requireAllowedImports(std::string_view object, const std::string &what);

// The object linked by the system linker (`cc -shared`, in `directory`) and
// loaded back: the AOT entry a benchmark can time beside the JIT's. The
// library stays loaded for the life of the process. Throws Error(Kind::Io)
// when linking or loading fails, with the linker's message.
NativeEntry linkShared(const Artifacts &artifacts, const std::string &directory);

} // namespace lanejit::aot
