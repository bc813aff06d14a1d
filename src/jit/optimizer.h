// The LLVM optimisation pipeline (new pass manager) the JIT runs on every
// kernel module, as its own ORC transform layer. Fast-math flags are never
// added, so no pass may reassociate or contract.
//
// Settings travel with the module as flags (set by runtime/compile.cpp):
//   "lanejit.opt_level"     0-3 (default 2);
//   "lanejit.lean_pipeline" 1: the short pipeline chosen for lanejit's IR
//                           (docs/architecture.md, "LLVM pipeline"), else
//                           LLVM's default O<level> pipeline;
//   "lanejit.time_passes"   1: print each LLVM pass's time to stderr.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace lanejit::jit {

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

// A module flag's integer value, or `fallback` when absent.
int moduleFlag(const llvm::Module &module, const char *name, int fallback);

} // namespace lanejit::jit
