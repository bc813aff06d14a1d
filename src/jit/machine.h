// The one description of the machine code lanejit emits (CPU, features,
// relocation and code model, the stack-size section), shared by the JIT, its
// optimiser, the dumps and the tests that drive LLVM themselves.
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>

#include <string>

namespace lanejit::jit {

// For `triple` (x86_64 or aarch64) with this CPU and feature string;
// initialises LLVM's targets on first use.
llvm::orc::JITTargetMachineBuilder machineBuilder(const std::string &triple,
                                                  const std::string &cpu,
                                                  const std::string &features);
// Registers LLVM's x86 and AArch64 targets (once): what machineBuilder
// needs, and the disassemblers' and MC's lookups.
void initializeTargets();

} // namespace lanejit::jit
