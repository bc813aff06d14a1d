#include "inspect/disassembler.h"

#include <lanejit/error.h>

#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>

#include <string>

namespace lanejit::inspect {
namespace {

[[noreturn]] void fail(const std::string &message) {
  throw Error(Error::Kind::Io, message);
}

// Every target inspect reads, whatever the host: an x86 machine inspects
// the AArch64 objects it cross-compiles. (The JIT registers the targets
// for codegen; the disassemblers are inspect's own.)
void registerTargets() {
  static const bool once = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86Disassembler();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64Disassembler();
    return true;
  }();
  (void)once;
}

} // namespace

Disassembler::Disassembler(const llvm::Triple &triple) {
  registerTargets();
  aarch64 = triple.getArch() == llvm::Triple::aarch64;
  std::string problem;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple.str(), problem);
  if (!target)
    fail("no disassembler for " + triple.str() + ": " + problem);
  llvm::MCTargetOptions options;
  registers.reset(target->createMCRegInfo(triple.str()));
  asmInfo.reset(target->createMCAsmInfo(*registers, triple.str(), options));
  // No CPU or features: the x86 decoder accepts every encoding (AVX-512
  // included) regardless, so any object decodes as written. AArch64's
  // decoder rejects what the subtarget lacks: enable the extensions a
  // kernel for any -mcpu may use (half and bf16 arithmetic, dot products).
  std::string features =
      aarch64 ? "+v8.6a,+neon,+fullfp16,+fp16fml,+bf16,+dotprod,+i8mm,+rcpc,+lse,+sve,+sve2" : "";
  subtarget.reset(target->createMCSubtargetInfo(triple.str(), "", features));
  instrInfo.reset(target->createMCInstrInfo());
  if (!registers || !asmInfo || !subtarget || !instrInfo)
    fail("cannot set up a disassembler for " + triple.str());
  context =
      std::make_unique<llvm::MCContext>(triple, asmInfo.get(), registers.get(), subtarget.get());
  decoder.reset(target->createMCDisassembler(*subtarget, *context));
  // Variant 1 is Intel syntax on x86: memory operands carry their size.
  // AArch64's variant 0 is the generic syntax ("ldr q0, [x8]"): the
  // register names carry the size there.
  printer.reset(
      target->createMCInstPrinter(triple, aarch64 ? 0 : 1, *asmInfo, *instrInfo, *registers));
  analysis.reset(target->createMCInstrAnalysis(instrInfo.get()));
  if (!decoder || !printer || !analysis)
    fail("LLVM has no disassembler/printer for " + triple.str());
}

} // namespace lanejit::inspect
