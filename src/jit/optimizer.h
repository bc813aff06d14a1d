// The LLVM optimisation pipeline (new pass manager) the JIT runs on every
// kernel module, as its own ORC transform layer. Fast-math flags are never
// added, so no pass may reassociate or contract.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace lanejit::jit {

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine, int optLevel);

} // namespace lanejit::jit
