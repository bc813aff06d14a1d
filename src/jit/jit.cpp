#include "jit/jit.h"

#include "jit/host_target.h"
#include "jit/machine.h"
#include "jit/object_loader.h"
#include "jit/optimizer.h"

#include <lanejit/error.h>

#include <llvm/IR/Constants.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdio>
#include <mutex>

namespace lanejit::jit {
namespace {

[[noreturn]] void fail(const std::string &what, llvm::Error error) {
  throw Error(Error::Kind::Compile, what + ": " + llvm::toString(std::move(error)));
}

// `machine`'s code for `module`: a relocatable object, or assembly text.
std::string emitCode(llvm::TargetMachine &machine, llvm::Module &module,
                     llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out, nullptr, type))
    throw Error(Error::Kind::Compile, "LLVM cannot emit code for this target");
  pm.run(module);
  return std::string(bytes.data(), bytes.size());
}

class Jit {
public:
  // Never destroyed: kernels held in static objects release their code
  // during static destruction, in any order.
  static Jit &instance() {
    static Jit *jit = new Jit;
    return *jit;
  }

  // Optimises, compiles and loads `module`. The target machine is made on
  // the first call, so a process that only loads cached objects never
  // registers LLVM's target or builds one.
  LinkedCode add(std::unique_ptr<llvm::Module> module, const std::string &entry,
                 const OptimizerSettings &settings, std::string *object) {
    auto start = std::chrono::steady_clock::now();
    std::string bytes;
    {
      // The machine's per-function subtargets are not thread-safe.
      std::lock_guard<std::mutex> lock(mutex_);
      llvm::TargetMachine &machine = requireMachine();
      module->setDataLayout(machine.createDataLayout());
      module->setTargetTriple(hostTarget().triple);
      optimizeModule(*module, machine, settings);
      bytes = emitCode(machine, *module, llvm::CGFT_ObjectFile);
    }
    LinkedCode code = loadObject(bytes, entry);
    if (settings.time_passes)
      std::fprintf(
          stderr, "; LLVM optimisation + code generation + loading of %s: %.3f ms\n", entry.c_str(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    if (object)
      *object = std::move(bytes);
    return code;
  }

private:
  llvm::TargetMachine &requireMachine() {
    if (!machine_) {
      const HostTarget &host = hostTarget();
      auto machine = machineBuilder(host.cpu, host.features).createTargetMachine();
      if (!machine)
        fail("no LLVM target machine for " + host.cpu, machine.takeError());
      machine_ = std::move(*machine);
    }
    return *machine_;
  }

  std::mutex mutex_;
  std::unique_ptr<llvm::TargetMachine> machine_;
};

} // namespace

// One object for JIT and AOT: position-independent small-model code links
// into a normal (PIE) executable, and the stack-size section lets `lanejit
// inspect` read each function's frame from the object itself.
llvm::orc::JITTargetMachineBuilder machineBuilder(const std::string &cpu,
                                                  const std::string &features) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(hostTarget().triple)};
  machine.setCPU(cpu);
  machine.addFeatures({features});
  machine.setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
  machine.setRelocationModel(llvm::Reloc::PIC_);
  machine.setCodeModel(llvm::CodeModel::Small);
  machine.getOptions().EmitStackSizeSection = true;
  return machine;
}

LinkedCode addModuleAndLookup(std::unique_ptr<llvm::Module> module,
                              std::unique_ptr<llvm::LLVMContext> context, const std::string &entry,
                              const OptimizerSettings &settings, std::string *object) {
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*module, &out))
    throw Error(Error::Kind::Compile, "internal: invalid LLVM IR for '" + entry + "': " + problems);
  // The module, then its context, go when this returns.
  return Jit::instance().add(std::move(module), entry, settings, object);
}

LinkedCode addObjectAndLookup(const std::string &object, const std::string &entry) {
  return loadObject(object, entry);
}

namespace {

std::unique_ptr<llvm::TargetMachine> makeMachine(const std::string &cpu,
                                                 const std::string &features) {
  auto machine = machineBuilder(cpu, features).createTargetMachine();
  if (!machine)
    fail("no LLVM target machine for " + cpu, machine.takeError());
  return std::move(*machine);
}

} // namespace

void optimizeForDump(llvm::Module &module, const std::string &cpu, const std::string &features,
                     const OptimizerSettings &settings) {
  auto machine = makeMachine(cpu, features);
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(hostTarget().triple);
  optimizeModule(module, *machine, settings);
}

std::string emitAssembly(llvm::Module &module, const std::string &cpu,
                         const std::string &features) {
  auto machine = makeMachine(cpu, features);
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(hostTarget().triple);
  return emitCode(*machine, module, llvm::CGFT_AssemblyFile);
}

} // namespace lanejit::jit
