// Loads a kernel's relocatable object into executable memory: lanejit's
// own small linker for the objects its JIT writes (jit.h).
//
// Those objects are a narrow subset of x86-64 ELF: position-independent
// small-model code, one .text, constant pools, no writable data, no
// unwind tables, and at most the runtime's memory routines as imports.
// Linking them through ORC's RuntimeDyld cost a process's first cached
// kernel about 1.1 ms (parsing the object twice through LLVM's object
// library, the execution session, and the page faults of all that code in
// libLLVM) against tens of microseconds here. Anything outside the subset
// (another machine or file type, a relocation kind the loader does not
// know, an import the runtime does not provide, a section it cannot place)
// is refused with an Error naming it, never guessed at.
#pragma once

#include "jit/jit.h"

#include <string_view>

namespace lanejit::jit {

// Maps `object`'s allocated sections (code read-execute, constants read-
// only, writable data read-write), applies its relocations, resolves its
// imports from runtimeSymbols() through stubs placed beside the code, and
// returns the address of the global function `entry`. The memory is
// unmapped when the last copy of the result's lifetime goes. Throws
// Error(Kind::Compile) when the object cannot be loaded.
LinkedCode loadObject(std::string_view object, const std::string &entry);

} // namespace lanejit::jit
