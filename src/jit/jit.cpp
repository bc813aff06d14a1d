#include "jit/jit.h"

#include "jit/host_target.h"
#include "jit/machine.h"
#include "jit/optimizer.h"

#include <lanejit/error.h>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>

#include <cstring>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
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

class Jit {
public:
  // Never destroyed: kernels held in static objects release their code
  // during static destruction, in any order.
  static Jit &instance() {
    static Jit *jit = new Jit;
    return *jit;
  }

  LinkedCode add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                 const std::string &entry, const OptimizerSettings &settings, std::string *object) {
    std::lock_guard<std::mutex> lock(mutex_);
    lastObject_.clear();
    if (!jit_)
      throw Error(Error::Kind::Compile, "LLVM JIT unavailable: " + initError_);
    bool timed = settings.time_passes;
    auto start = std::chrono::steady_clock::now();
    module->setDataLayout(jit_->getDataLayout());
    module->setTargetTriple(jit_->getTargetTriple().str());
    // Under the lock: the machine's per-function subtargets are not
    // thread-safe.
    optimizeModule(*module, *optimizerMachine_, settings);
    llvm::orc::ThreadSafeModule tsm(std::move(module), std::move(context));
    // One tracker per kernel, so its code can be removed on its own.
    llvm::orc::ResourceTrackerSP tracker = jit_->getMainJITDylib().createResourceTracker();
    if (llvm::Error e = jit_->addIRModule(tracker, std::move(tsm))) {
      llvm::consumeError(tracker->remove());
      fail("adding kernel module", std::move(e));
    }
    auto symbol = jit_->lookup(entry);
    if (!symbol) {
      llvm::consumeError(tracker->remove());
      fail("compiling kernel '" + entry + "'", symbol.takeError());
    }
    // The lookup emitted the module on this thread, under the lock.
    if (timed)
      std::fprintf(
          stderr, "; LLVM optimisation + code generation + linking of %s: %.3f ms\n", entry.c_str(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    if (object)
      *object = std::move(lastObject_);
    return {symbol->getValue(), std::make_shared<Release>(this, std::move(tracker))};
  }

  LinkedCode addObject(const std::string &object, const std::string &entry) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!jit_)
      throw Error(Error::Kind::Compile, "LLVM JIT unavailable: " + initError_);
    auto &es = jit_->getExecutionSession();
    auto dylib = jit_->createJITDylib("lanejit_object_" + std::to_string(objects_++));
    if (!dylib)
      fail("linking a cached kernel", dylib.takeError());
    // The runtime symbols (memcpy, ...) live in the main JITDylib.
    dylib->addToLinkOrder(jit_->getMainJITDylib());
    auto drop = [&] { llvm::consumeError(es.removeJITDylib(*dylib)); };
    if (llvm::Error e =
            jit_->addObjectFile(*dylib, llvm::MemoryBuffer::getMemBufferCopy(object, entry))) {
      drop();
      fail("linking a cached kernel", std::move(e));
    }
    auto symbol = jit_->lookup(*dylib, entry);
    if (!symbol) {
      drop();
      fail("linking cached kernel '" + entry + "'", symbol.takeError());
    }
    return {symbol->getValue(), std::make_shared<ReleaseDylib>(this, &*dylib)};
  }

private:
  // Removes a cached object's JITDylib, and its code, with its last holder.
  struct ReleaseDylib {
    Jit *jit;
    llvm::orc::JITDylib *dylib;
    ReleaseDylib(Jit *j, llvm::orc::JITDylib *d) : jit(j), dylib(d) {}
    ~ReleaseDylib() {
      std::lock_guard<std::mutex> lock(jit->mutex_);
      llvm::consumeError(jit->jit_->getExecutionSession().removeJITDylib(*dylib));
    }
  };

  // Removes one kernel's code when the last holder lets go.
  struct Release {
    Jit *jit;
    llvm::orc::ResourceTrackerSP tracker;
    Release(Jit *j, llvm::orc::ResourceTrackerSP t) : jit(j), tracker(std::move(t)) {}
    ~Release() {
      std::lock_guard<std::mutex> lock(jit->mutex_);
      // A failure here can only leak the code; a destructor cannot report it.
      llvm::consumeError(tracker->remove());
    }
  };

  Jit() {
    const HostTarget &host = hostTarget();
    llvm::orc::JITTargetMachineBuilder machine = machineBuilder(host.cpu, host.features);
    auto optimizerMachine = machine.createTargetMachine();
    if (!optimizerMachine) {
      initError_ = llvm::toString(optimizerMachine.takeError());
      return;
    }
    optimizerMachine_ = std::move(*optimizerMachine);
    auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(machine).create();
    if (!built) {
      initError_ = llvm::toString(built.takeError());
      return;
    }
    jit_ = std::move(*built);
    // Nothing else in the process is visible to kernels.
    llvm::orc::SymbolMap runtime;
    auto &es = jit_->getExecutionSession();
    for (const RuntimeSymbol &s : runtimeSymbols())
      runtime[es.intern(s.name)] = llvm::JITEvaluatedSymbol(
          llvm::pointerToJITTargetAddress(s.address), llvm::JITSymbolFlags::Exported);
    if (auto err = jit_->getMainJITDylib().define(llvm::orc::absoluteSymbols(runtime))) {
      initError_ = llvm::toString(std::move(err));
      return;
    }
    // Keep a copy of each kernel's object as linked (see add()).
    jit_->getObjTransformLayer().setTransform(
        [this](std::unique_ptr<llvm::MemoryBuffer> object)
            -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
          lastObject_ = object->getBuffer().str();
          return object;
        });
  }

  std::mutex mutex_;
  std::unique_ptr<llvm::TargetMachine> optimizerMachine_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::string initError_;
  std::string lastObject_; // the object of the module being added
  uint64_t objects_ = 0;   // cached objects linked (names their JITDylibs)
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

const std::vector<RuntimeSymbol> &runtimeSymbols() {
  static const std::vector<RuntimeSymbol> symbols = {
      {"memcpy", reinterpret_cast<void *>(&::memcpy)},
      {"memmove", reinterpret_cast<void *>(&::memmove)},
      {"memset", reinterpret_cast<void *>(&::memset)},
  };
  return symbols;
}

LinkedCode addModuleAndLookup(std::unique_ptr<llvm::Module> module,
                              std::unique_ptr<llvm::LLVMContext> context, const std::string &entry,
                              const OptimizerSettings &settings, std::string *object) {
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*module, &out))
    throw Error(Error::Kind::Compile, "internal: invalid LLVM IR for '" + entry + "': " + problems);
  return Jit::instance().add(std::move(module), std::move(context), entry, settings, object);
}

LinkedCode addObjectAndLookup(const std::string &object, const std::string &entry) {
  return Jit::instance().addObject(object, entry);
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
  llvm::SmallString<4096> text;
  llvm::raw_svector_ostream out(text);
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out, nullptr, llvm::CGFT_AssemblyFile))
    throw Error(Error::Kind::Compile, "LLVM cannot emit assembly for this target");
  pm.run(module);
  return std::string(text.str());
}

} // namespace lanejit::jit
