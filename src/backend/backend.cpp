#include "backend/backend.h"

#include "codegen/emit_kernel.h"
#include "codegen/emit_rows_across_lanes.h"
#include "jit/host_target.h"
#include "jit/jit.h"

#include <lanejit/error.h>

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

namespace lanejit::backend {
namespace {

// An empty module for `target`: its triple picks the JIT's machine.
std::unique_ptr<llvm::Module> newModule(const std::string &symbol, const Target &target,
                                        llvm::LLVMContext &context) {
  auto module = std::make_unique<llvm::Module>(symbol, context);
  module->setTargetTriple(target.codegen.triple);
  return module;
}

std::unique_ptr<llvm::Module> emitModule(const lower::KernelPlan &plan, const Target &target,
                                         llvm::LLVMContext &context, const std::string &symbol,
                                         codegen::CodegenCounts *counts,
                                         std::optional<int64_t> fixedCols) {
  auto module = newModule(symbol, target, context);
  codegen::emitKernel(plan, *module, target.codegen, symbol, counts, fixedCols);
  return module;
}

// Whether an LLVM feature list ("+avx2,-avx512f,...") turns `name` on.
bool hasFeature(const std::string &features, const std::string &name) {
  std::string want = "+" + name;
  for (size_t at = features.find(want); at != std::string::npos; at = features.find(want, at + 1)) {
    size_t end = at + want.size();
    if (end == features.size() || features[end] == ',')
      return true;
  }
  return false;
}

} // namespace

Target resolveTarget(const std::string &triple, const std::string &cpu,
                     const std::string &feature_overrides) {
  jit::HostTarget host = jit::targetFor(triple, cpu, feature_overrides);
  // The x86 instruction choices stay off on AArch64 whatever its features
  // are named: their generic forms give the same bits.
  bool x86 = !host.aarch64;
  codegen::MathTarget math{host.fma, x86 && host.avx512f,
                           x86 && hasFeature(host.features, "avx512vl"),
                           x86 && hasFeature(host.features, "avx512dq"),
                           x86 && hasFeature(host.features, "f16c"),
                           x86 && hasFeature(host.features, "avx512bf16"), !x86};
  return {{host.triple, x86, host.cpu, host.features, math}, host.maxLanes()};
}

std::string cannotRunHere(const Target &target) {
  const codegen::CodegenTarget &t = target.codegen;
  if (!jit::runsOnHostArchitecture(t.triple))
    return "compiled for " + llvm::Triple(t.triple).getArchName().str() + " (" + t.cpu +
           "); this machine is " + llvm::Triple(jit::hostTarget().triple).getArchName().str();
  std::vector<std::string> missing = jit::featuresMissingOnHost(t.features);
  if (missing.empty())
    return "";
  std::string why = "compiled for " + t.cpu + " with CPU features this machine lacks (";
  for (size_t i = 0; i < missing.size(); ++i)
    why += (i ? ", " : "") + missing[i];
  return why + ")";
}

namespace {

// Optimises and links `module` (its entry `symbol`) into `native`, keeping
// its object for the persistent cache, inspect and aot.
Native linked(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
              const std::string &symbol, const jit::OptimizerSettings &settings, Native native) {
  jit::LinkedCode code = jit::addModuleAndLookup(std::move(module), std::move(context), symbol,
                                                 settings, &native.object);
  native.entry = reinterpret_cast<NativeEntry>(code.entry);
  native.lifetime = std::move(code.lifetime);
  native.symbol = symbol;
  return native;
}

} // namespace

Native compile(const lower::KernelPlan &plan, const Target &target,
               const jit::OptimizerSettings &settings, const std::string &symbol,
               std::optional<int64_t> fixedCols) {
  Native native;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = emitModule(plan, target, *context, symbol, &native.counts, fixedCols);
  return linked(std::move(module), std::move(context), symbol, settings, std::move(native));
}

NativePart compilePart(const lower::KernelPlan &plan, const Target &target,
                       const jit::OptimizerSettings &settings, const std::string &symbol) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = newModule(symbol, target, *context);
  codegen::emitPartKernel(plan, *module, target.codegen, symbol);
  jit::LinkedCode linked =
      jit::addModuleAndLookup(std::move(module), std::move(context), symbol, settings);
  return {reinterpret_cast<lower::NativePartEntry>(linked.entry), std::move(linked.lifetime)};
}

Native compileRowsAcrossLanes(const lower::KernelPlan &plan, const Target &target,
                              const jit::OptimizerSettings &settings, const std::string &symbol,
                              int64_t cols) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = newModule(symbol, target, *context);
  codegen::emitRowsAcrossLanes(plan, *module, target.codegen, symbol, cols);
  return linked(std::move(module), std::move(context), symbol, settings, Native{});
}

Native link(const std::string &object, const std::string &symbol,
            const codegen::CodegenCounts &counts) {
  jit::LinkedCode linked = jit::addObjectAndLookup(object, symbol);
  return {reinterpret_cast<NativeEntry>(linked.entry), std::move(linked.lifetime), object, symbol,
          counts};
}

std::string version() {
  return "LLVM " LLVM_VERSION_STRING;
}

std::string dump(const lower::KernelPlan &plan, const Target &target,
                 const jit::OptimizerSettings &settings, const std::string &symbol,
                 const std::string &stage, EntryKind kind, int64_t cols) {
  // A private context: the JIT's module is gone after linking.
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module;
  if (kind == EntryKind::RowsAcrossLanes) {
    module = newModule(symbol, target, context);
    codegen::emitRowsAcrossLanes(plan, *module, target.codegen, symbol, cols);
  } else {
    std::optional<int64_t> fixedCols;
    if (kind == EntryKind::Columns)
      fixedCols = cols;
    module = emitModule(plan, target, context, symbol, nullptr, fixedCols);
  }
  const codegen::CodegenTarget &t = target.codegen;
  if (stage != "llvm-unoptimized")
    jit::optimizeForDump(*module, t.cpu, t.features, settings);
  if (stage == "asm")
    return jit::emitAssembly(*module, t.cpu, t.features);
  std::string text;
  llvm::raw_string_ostream out(text);
  module->print(out, nullptr);
  return text;
}

} // namespace lanejit::backend
