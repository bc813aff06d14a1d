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

} // namespace

Disassembler::Disassembler(const llvm::Triple &triple) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetDisassembler();
  std::string problem;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple.str(), problem);
  if (!target)
    fail("no disassembler for " + triple.str() + ": " + problem);
  llvm::MCTargetOptions options;
  registers.reset(target->createMCRegInfo(triple.str()));
  asmInfo.reset(target->createMCAsmInfo(*registers, triple.str(), options));
  // No CPU or features: the x86 decoder accepts every encoding (AVX-512
  // included) regardless, so any object decodes as written.
  subtarget.reset(target->createMCSubtargetInfo(triple.str(), "", ""));
  instrInfo.reset(target->createMCInstrInfo());
  if (!registers || !asmInfo || !subtarget || !instrInfo)
    fail("cannot set up a disassembler for " + triple.str());
  context =
      std::make_unique<llvm::MCContext>(triple, asmInfo.get(), registers.get(), subtarget.get());
  decoder.reset(target->createMCDisassembler(*subtarget, *context));
  // Variant 1 is Intel syntax on x86: memory operands carry their size.
  printer.reset(target->createMCInstPrinter(triple, 1, *asmInfo, *instrInfo, *registers));
  analysis.reset(target->createMCInstrAnalysis(instrInfo.get()));
  if (!decoder || !printer || !analysis)
    fail("LLVM has no disassembler/printer for " + triple.str());
}

} // namespace lanejit::inspect
