// Loads a kernel's relocatable object into executable memory: lanejit's
// own small linker for the objects its JIT writes (jit.h).
//
// Those objects are a narrow subset of x86-64 or AArch64 ELF (the host's
// machine; elf_relocations.h has each one's relocations): position-
// independent small-model code, one .text, constant pools, no writable
// data, no unwind tables, and at most the runtime's memory routines as
// imports.
// Linking them through ORC's RuntimeDyld cost a process's first cached
// kernel about 1.1 ms (parsing the object twice through LLVM's object
// library, the execution session, and the page faults of all that code in
// libLLVM) against tens of microseconds here. Anything outside the subset
// (another machine or file type, a relocation kind the loader does not
// know, an import the runtime does not provide, a section it cannot place)
// is refused with an Error naming it, never guessed at.
#pragma once

#include "jit/jit.h"

#include <cstdint>
#include <string_view>

namespace lanejit::jit {

// Maps `object`'s allocated sections (code read-execute, constants read-
// only, writable data read-write), applies its relocations, resolves its
// imports from runtimeSymbols() through stubs placed beside the code, and
// returns the address of the global function `entry`. The memory is
// unmapped when the last copy of the result's lifetime goes. Throws
// Error(Kind::Compile) when the object cannot be loaded.
LinkedCode loadObject(std::string_view object, const std::string &entry);

// The ELF machine (e_machine) of the host's objects, which loadObject
// accepts: EM_X86_64 or EM_AARCH64.
uint16_t hostElfMachine();

// loadObject for objects of `machine` (EM_X86_64 or EM_AARCH64) whatever
// the host's: mapped, relocated and protected the same way, but only the
// host's code may run. Tests load AArch64 objects on x86-64 with it to
// check what the loader writes.
LinkedCode loadObjectFor(uint16_t machine, std::string_view object, const std::string &entry);

} // namespace lanejit::jit
