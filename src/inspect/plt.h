// LinkedCallTargets: the names behind calls a linked object (shared object
// or executable) makes through its PLT or GOT.
//
// In a linked object a call to an imported function (or to an exported one,
// which may be interposed) lands on a PLT entry in .plt, .plt.sec or
// .plt.got. Every such entry jumps through a GOT slot (`jmp qword ptr
// [rip + X]`, after an `endbr64` in .plt.sec), and the dynamic relocation at
// that slot names the symbol: JUMP_SLOT in .rela.plt, GLOB_DAT in .rela.dyn
// for .plt.got. Following the entry's own jmp, rather than pairing the n-th
// entry with the n-th JUMP_SLOT, needs no assumption about entry sizes or
// the header entry, and also names .plt.got entries and `-fno-plt` calls
// (`call qword ptr [rip + X]`), which go through a slot directly.
//
// AArch64: an entry is "adrp x16, PAGE; ldr x17, [x16, #OFF]; add x16,
// x16, #OFF; br x17" (after a "bti c" with BTI): the slot is PAGE + OFF.
#pragma once

#include "inspect/disassembler.h"

#include <llvm/Object/ObjectFile.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lanejit::inspect {

class LinkedCallTargets {
public:
  LinkedCallTargets(const llvm::object::ObjectFile &object, const Disassembler &disassembler);

  // The symbol behind the PLT entry at `address`; "" when `address` is in no
  // PLT section or the entry's slot carries no symbol.
  std::string pltEntry(uint64_t address) const;
  // The symbol whose GOT slot is at `address`; "" when none.
  std::string gotSlot(uint64_t address) const;

private:
  std::string aarch64Entry(llvm::ArrayRef<uint8_t> bytes, uint64_t address) const;
  struct Section {
    uint64_t address = 0;
    llvm::StringRef bytes;
  };
  const Disassembler &d_;
  std::vector<Section> plt_;
  std::map<uint64_t, std::string> slots_; // GOT slot address -> symbol
};

} // namespace lanejit::inspect
