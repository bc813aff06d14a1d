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

namespace lanejit::backend {
namespace {

std::unique_ptr<llvm::Module> emitModule(const lower::KernelPlan &plan, const Target &target,
                                         llvm::LLVMContext &context, const std::string &symbol,
                                         codegen::CodegenCounts *counts,
                                         std::optional<int64_t> fixedCols) {
  auto module = std::make_unique<llvm::Module>(symbol, context);
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

Target resolveTarget(const std::string &cpu, const std::string &feature_overrides) {
  jit::HostTarget host = jit::targetFor(cpu, feature_overrides);
  codegen::MathTarget math{host.fma, host.avx512f, hasFeature(host.features, "avx512vl"),
                           hasFeature(host.features, "avx512dq"),
                           hasFeature(host.features, "f16c")};
  return {{host.cpu, host.features, math}, host.maxLanes()};
}

std::vector<std::string> featuresMissingOnHost(const Target &target) {
  return jit::featuresMissingOnHost(target.codegen.features);
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
  auto module = std::make_unique<llvm::Module>(symbol, *context);
  codegen::emitPartKernel(plan, *module, target.codegen, symbol);
  jit::LinkedCode linked =
      jit::addModuleAndLookup(std::move(module), std::move(context), symbol, settings);
  return {reinterpret_cast<lower::NativePartEntry>(linked.entry), std::move(linked.lifetime)};
}

Native compileRowsAcrossLanes(const lower::KernelPlan &plan, const Target &target,
                              const jit::OptimizerSettings &settings, const std::string &symbol,
                              int64_t cols) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(symbol, *context);
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
    module = std::make_unique<llvm::Module>(symbol, context);
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
