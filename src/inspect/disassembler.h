// Disassembler: the MC layer objects that decode and print one target's
// code (x86-64: Intel syntax; AArch64: generic), shared by the object reader and the PLT reader.
#pragma once

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/TargetParser/Triple.h>

#include <memory>

namespace lanejit::inspect {

struct Disassembler {
  bool aarch64 = false; // else x86-64
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> decoder;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;

  // Throws Error(Kind::Io) when LLVM has no disassembler for `triple`.
  explicit Disassembler(const llvm::Triple &triple);
};

} // namespace lanejit::inspect
