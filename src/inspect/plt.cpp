#include "inspect/plt.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/MC/MCInst.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>

namespace lanejit::inspect {
namespace {

template <typename T> bool take(llvm::Expected<T> &value) {
  if (value)
    return true;
  llvm::consumeError(value.takeError());
  return false;
}

} // namespace

LinkedCallTargets::LinkedCallTargets(const llvm::object::ObjectFile &object,
                                     const Disassembler &disassembler)
    : d_(disassembler) {
  for (const llvm::object::SectionRef &section : object.sections()) {
    auto name = section.getName();
    if (!take(name))
      continue;
    if (*name == ".plt" || *name == ".plt.sec" || *name == ".plt.got") {
      auto contents = section.getContents();
      if (take(contents))
        plt_.push_back(Section{section.getAddress(), *contents});
      continue;
    }
    uint32_t type = llvm::object::ELFSectionRef(section).getType();
    if (type != llvm::ELF::SHT_RELA && type != llvm::ELF::SHT_REL)
      continue;
    // A linked object's relocations are the dynamic ones: their offsets are
    // addresses, their symbols those of .dynsym.
    for (const llvm::object::RelocationRef &rel : section.relocations()) {
      auto symbol = rel.getSymbol();
      if (symbol == object.symbol_end())
        continue; // R_X86_64_RELATIVE and the like name nothing
      auto symbolName = symbol->getName();
      if (take(symbolName) && !symbolName->empty())
        slots_[rel.getOffset()] = symbolName->str();
    }
  }
}

std::string LinkedCallTargets::gotSlot(uint64_t address) const {
  auto it = slots_.find(address);
  return it == slots_.end() ? "" : it->second;
}

std::string LinkedCallTargets::aarch64Entry(llvm::ArrayRef<uint8_t> bytes,
                                            uint64_t address) const {
  std::optional<uint64_t> page;
  for (uint64_t at = 0; at + 4 <= bytes.size() && at < 12; at += 4) {
    llvm::MCInst inst;
    uint64_t size = 0;
    if (d_.decoder->getInstruction(inst, size, bytes.slice(at), address + at, llvm::nulls()) !=
        llvm::MCDisassembler::Success)
      return "";
    llvm::StringRef name = d_.instrInfo->getName(inst.getOpcode());
    if (name == "ADRP" && inst.getNumOperands() == 2 && inst.getOperand(1).isImm())
      page = ((address + at) & ~uint64_t{0xfff}) + (inst.getOperand(1).getImm() << 12);
    else if (name == "LDRXui" && page && inst.getNumOperands() == 3 && inst.getOperand(2).isImm())
      return gotSlot(*page + static_cast<uint64_t>(inst.getOperand(2).getImm()) * 8);
    else if (name != "HINT") // bti c
      return "";
  }
  return "";
}

std::string LinkedCallTargets::pltEntry(uint64_t address) const {
  for (const Section &s : plt_) {
    if (address < s.address || address >= s.address + s.bytes.size())
      continue;
    llvm::ArrayRef<uint8_t> bytes(s.bytes.bytes_begin(), s.bytes.size());
    if (d_.aarch64)
      return aarch64Entry(bytes.slice(address - s.address), address);
    // An entry's jmp through its slot comes first, or after an endbr64:
    // a few instructions at most. A direct jmp first (a lazy .plt entry's
    // jump to the resolver) means the address is not an entry start.
    uint64_t at = address - s.address;
    for (int i = 0; i < 3 && at < bytes.size(); ++i) {
      llvm::MCInst inst;
      uint64_t size = 0;
      if (d_.decoder->getInstruction(inst, size, bytes.slice(at), s.address + at,
                                     llvm::nulls()) != llvm::MCDisassembler::Success)
        return "";
      const llvm::MCInstrDesc &desc = d_.instrInfo->get(inst.getOpcode());
      if (desc.isBranch() || desc.isCall()) {
        if (!desc.isIndirectBranch())
          return "";
        auto slot = d_.analysis->evaluateMemoryOperandAddress(inst, d_.subtarget.get(),
                                                              s.address + at, size);
        return slot ? gotSlot(*slot) : "";
      }
      at += size;
    }
    return "";
  }
  return "";
}

} // namespace lanejit::inspect
