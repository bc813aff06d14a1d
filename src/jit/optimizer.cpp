#include "jit/optimizer.h"

#include "jit/split_long_blocks.h"

#include <lanejit/error.h>

#include <cstdlib>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/PassTimingInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/CorrelatedValuePropagation.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/JumpThreading.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

namespace lanejit::jit {
namespace {

// One sweep, not LLVM 16's default of sweeping until a sweep changes
// nothing (LLVM 17 made one the default). The last InstCombine of
// leanPipeline() still runs to a fixed point; the code came out
// byte-identical for every library kernel and test program at W 4/8/16,
// specialised entries and AVX2 (docs/compile-time.md), for 5-13% less
// optimiser time. The last one needs its second sweep: with one, RoPE
// 17x66's two-trip packet loop keeps the shape that loop strength
// reduction then spoils.
llvm::InstCombinePass firstInstCombine() {
  return llvm::InstCombinePass(/*MaxIterations=*/1);
}

// lanejit's IR arrives vectorised, unrolled as far as the plan wants
// (accumulators), with its helpers' inlining decided. What is left for the
// optimiser: promote the emitter's few allocas, merge repeated loads and
// splats, fold the per-row scalar arithmetic (column bounds, packet counts,
// leftover branches), tidy the CFG the emitter's if/else helpers leave, and
// hoist launch-uniform values out of rotated loops. The default pipeline's
// vectorisers, unroller, inliner, its loop passes beyond these and its
// inter-procedural passes found nothing to improve and cost about twice the
// time (measured pass by pass; docs/compile-time.md).
llvm::FunctionPassManager leanPipeline() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  // Without this round masked softmax's per-row bound arithmetic stayed
  // as emitted: 17x65 ran 5-9% slower than under O2.
  fpm.addPass(firstInstCombine());
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::CorrelatedValuePropagationPass());
  // Rotated (do-while) loops with simplified induction variables: without
  // them masked softmax's bounded traversals ran 1.3-1.5x slower than
  // under O2 (docs/compile-time.md).
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LoopRotatePass()));
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LICMPass(llvm::LICMOptions()),
                                                    /*UseMemorySSA=*/true));
  fpm.addPass(firstInstCombine());
  fpm.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::IndVarSimplifyPass()));
  // The range facts these passes find let the last InstCombine turn a
  // packet loop of a specialised entry with two trips into one that
  // codegen's loop strength reduction leaves alone: without them RoPE
  // 17x66's row loop carried four extra pointers and spilled (0.73-0.85 of
  // O2's speed). GVN and JumpThreading were each worth 1-4% on masked
  // softmax 17x65.
  fpm.addPass(llvm::GVNPass());
  fpm.addPass(llvm::JumpThreadingPass());
  fpm.addPass(llvm::CorrelatedValuePropagationPass());
  fpm.addPass(llvm::InstCombinePass());
  return fpm;
}

} // namespace

std::string leanPipelineOverride() {
  const char *text = std::getenv("LANEJIT_LLVM_PASSES");
  return text ? text : "";
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    const OptimizerSettings &settings) {
  int optLevel = settings.opt_level;
  if (optLevel <= 0) {
    splitLongBlocks(module);
    return;
  }
  llvm::PassInstrumentationCallbacks instrumentation;
  llvm::TimePassesHandler timer(/*Enabled=*/true);
  bool timed = settings.time_passes;
  if (timed)
    timer.registerCallbacks(instrumentation);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine, llvm::PipelineTuningOptions(), std::nullopt,
                            timed ? &instrumentation : nullptr);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  if (settings.lean_pipeline) {
    llvm::ModulePassManager mpm;
    // For experiments with the pipeline (docs/compile-time.md).
    if (std::string text = leanPipelineOverride(); !text.empty()) {
      if (llvm::Error e = builder.parsePassPipeline(mpm, text))
        throw Error(Error::Kind::Compile, "LANEJIT_LLVM_PASSES: " + llvm::toString(std::move(e)));
    } else {
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(leanPipeline()));
    }
    mpm.run(module, mam);
  } else {
    llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                    : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                    : llvm::OptimizationLevel::O3;
    builder.buildPerModuleDefaultPipeline(level).run(module, mam);
  }
  if (timed) {
    llvm::errs() << "; LLVM optimisation passes of " << module.getName() << ":\n";
    timer.print();
  }
  // Last, so no pass merges the pieces back (docs/architecture.md).
  splitLongBlocks(module);
}

} // namespace lanejit::jit
