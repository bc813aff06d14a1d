// The one description of the machine code lanejit emits (CPU, features,
// relocation and code model, the stack-size section), shared by the JIT, its
// optimiser, the dumps and the tests that drive LLVM themselves.
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>

#include <string>

namespace lanejit::jit {

// For the host's triple with this CPU and feature string; initialises
// LLVM's native target on first use.
llvm::orc::JITTargetMachineBuilder machineBuilder(const std::string &cpu,
                                                  const std::string &features);

} // namespace lanejit::jit
