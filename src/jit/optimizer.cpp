#include "jit/optimizer.h"

#include "jit/split_long_blocks.h"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace lanejit::jit {

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine, int optLevel) {
  if (optLevel <= 0) {
    splitLongBlocks(module);
    return;
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  builder.buildPerModuleDefaultPipeline(level).run(module, mam);
  // Last, so no pass merges the pieces back (docs/architecture.md).
  splitLongBlocks(module);
}

} // namespace lanejit::jit
