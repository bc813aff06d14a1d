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

#include <elf.h>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <map>
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
    // The module's triple is its target's (codegen sets it): the host's
    // architecture, or another one that is compiled and not loaded.
    std::string triple = module->getTargetTriple();
    if (triple.empty())
      triple = hostTarget().triple;
    {
      // The machine's per-function subtargets are not thread-safe.
      std::lock_guard<std::mutex> lock(mutex_);
      llvm::TargetMachine &machine = requireMachine(triple);
      module->setDataLayout(machine.createDataLayout());
      module->setTargetTriple(triple);
      optimizeModule(*module, machine, settings);
      bytes = emitCode(machine, *module, llvm::CGFT_ObjectFile);
    }
    LinkedCode code;
    if (runsOnHostArchitecture(triple))
      code = loadObject(bytes, entry);
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
  // One machine per triple, made on first use. Its CPU is the host's for
  // the host's triple and the generic one otherwise: each function's own
  // CPU and features come with it as attributes.
  llvm::TargetMachine &requireMachine(const std::string &triple) {
    std::unique_ptr<llvm::TargetMachine> &machine = machines_[triple];
    if (!machine)
      machine = makeMachine(triple);
    return *machine;
  }

  static std::unique_ptr<llvm::TargetMachine> makeMachine(const std::string &triple) {
    const HostTarget &host = hostTarget();
    bool native = triple == host.triple;
    auto machine = machineBuilder(triple, native ? host.cpu : "generic",
                                  native ? host.features : "")
                       .createTargetMachine();
    if (!machine)
      fail("no LLVM target machine for " + triple, machine.takeError());
    return std::move(*machine);
  }

  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines_;
};

} // namespace

// The two architectures lanejit compiles for; each target's pieces once.
void initializeTargets() {
  static const bool done = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    return true;
  }();
  (void)done;
}

// One object for JIT and AOT: position-independent small-model code links
// into a normal (PIE) executable, and the stack-size section lets `lanejit
// inspect` read each function's frame from the object itself.
llvm::orc::JITTargetMachineBuilder machineBuilder(const std::string &triple,
                                                  const std::string &cpu,
                                                  const std::string &features) {
  initializeTargets();
  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(triple)};
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
  // An object for another architecture (the persistent cache keeps those
  // too) is only kept, as add() does.
  if (object.size() >= EI_NIDENT + 4) {
    uint16_t machine;
    std::memcpy(&machine, object.data() + 18, sizeof machine); // Elf64_Ehdr::e_machine
    if (machine != hostElfMachine())
      return {};
  }
  return loadObject(object, entry);
}

namespace {

// A machine for `module`'s triple (the host's when it has none), which the
// module is then set up for.
std::unique_ptr<llvm::TargetMachine> machineFor(llvm::Module &module, const std::string &cpu,
                                                const std::string &features) {
  std::string triple = module.getTargetTriple();
  if (triple.empty())
    triple = hostTarget().triple;
  auto machine = machineBuilder(triple, cpu, features).createTargetMachine();
  if (!machine)
    fail("no LLVM target machine for " + triple + " " + cpu, machine.takeError());
  module.setDataLayout((*machine)->createDataLayout());
  module.setTargetTriple(triple);
  return std::move(*machine);
}

} // namespace

void optimizeForDump(llvm::Module &module, const std::string &cpu, const std::string &features,
                     const OptimizerSettings &settings) {
  optimizeModule(module, *machineFor(module, cpu, features), settings);
}

std::string emitAssembly(llvm::Module &module, const std::string &cpu,
                         const std::string &features) {
  return emitCode(*machineFor(module, cpu, features), module, llvm::CGFT_AssemblyFile);
}

} // namespace lanejit::jit
