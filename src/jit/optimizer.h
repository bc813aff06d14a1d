// The LLVM optimisation pipeline (new pass manager) run on every kernel
// module before the JIT emits its object. Fast-math flags are never added,
// so no pass may reassociate or contract.
#pragma once

#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace lanejit::jit {

struct OptimizerSettings {
  int opt_level = 2;          // 0-3; 0 runs no pass
  bool lean_pipeline = false; // the short pipeline chosen for lanejit's IR
                              // (docs/architecture.md, "LLVM pipeline"),
                              // else LLVM's default O<opt_level> pipeline
  bool time_passes = false;   // print each LLVM pass's time to stderr
};

// LANEJIT_LLVM_PASSES, for experiments: a pipeline in LLVM's text syntax
// (opt -passes=...) that replaces the lean one; "" when unset. It changes
// the code, so the persistent cache's key holds it.
std::string leanPipelineOverride();

// Throws Error(Kind::Compile) for a malformed LANEJIT_LLVM_PASSES.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    const OptimizerSettings &settings);

} // namespace lanejit::jit
