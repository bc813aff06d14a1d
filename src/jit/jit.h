// The process-wide JIT: compiles a module to a relocatable object with one
// LLVM target machine and loads it with lanejit's own object loader
// (object_loader.h), each kernel in memory of its own.
//
// Target CPU and features travel as function attributes, so kernels for
// different feature sets share one target machine. A module is optimised
// (optimizer.h) with the settings it is added with, compiled to an object
// and loaded; an object from the persistent cache is only loaded, and a
// process that only loads never builds a target machine. Compiling is
// serialised by a mutex, so compile() may be called from any thread. LLVM
// errors come back as lanejit::Error(Kind::Compile), never abort().
#pragma once

#include "jit/optimizer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace lanejit::jit {

// The only external symbols a kernel may use: the C library's memory
// routines, which LLVM emits for copies and fills (row staging, masked
// softmax's zeros). The JIT resolves exactly these; `lanejit aot` allows
// exactly these imports.
struct RuntimeSymbol {
  const char *name;
  void *address;
};
const std::vector<RuntimeSymbol> &runtimeSymbols();

// A kernel's code. The code stays mapped while any copy of `lifetime`
// lives; the last copy's destruction unmaps it, so a kernel cache can
// evict.
struct LinkedCode {
  uint64_t entry = 0;
  std::shared_ptr<void> lifetime;
};

// Optimises and compiles `module` (which must define `entry`) for its
// target triple (the host's when it has none), loads it and returns its
// address; code for another architecture is not loaded (entry 0). With
// `object`, also returns a copy of the relocatable object (what `lanejit
// inspect` reads and `lanejit aot` writes).
LinkedCode addModuleAndLookup(std::unique_ptr<llvm::Module> module,
                              std::unique_ptr<llvm::LLVMContext> context, const std::string &entry,
                              const OptimizerSettings &settings, std::string *object = nullptr);

// Loads a relocatable object this JIT produced earlier (the persistent
// cache's) and returns the address of `entry` in it (0, not loaded, for
// another architecture's). Each object is loaded
// on its own, so its symbol names cannot clash with any other kernel's.
// Throws Error(Kind::Compile) when the object cannot be loaded.
LinkedCode addObjectAndLookup(const std::string &object, const std::string &entry);

// For dumps: the same optimisation the JIT applies, and
// the assembly the JIT would link, for a module outside the JIT.
void optimizeForDump(llvm::Module &module, const std::string &cpu, const std::string &features,
                     const OptimizerSettings &settings);
std::string emitAssembly(llvm::Module &module, const std::string &cpu, const std::string &features);

} // namespace lanejit::jit
